import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct AdminTests {
    let it = AuthHarness.it
    let project = "\(AuthHarness.it)/projects/demo-hearth"

    @Test func batchGetPagesInLocalIdOrder() throws {
        let h = try AuthHarness()
        for i in 0..<5 { h.post("\(project)/accounts", .object(["localId": .string("u\(i)"), "email": .string("u\(i)@b.com"), "password": "secret123"]), admin: true) }
        let first = h.get("\(project)/accounts:batchGet?maxResults=2")
        #expect(first.json["kind"] == "identitytoolkit#DownloadAccountResponse")
        #expect(first.json["users"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } == ["u0", "u1"])
        #expect(first.json["nextPageToken"] == "u1")
        #expect(first.json["users"]?[0]?["passwordHash"]?.stringValue?.isEmpty == false)
        #expect(first.json["users"]?[0]?["salt"] != nil)
        let second = h.get("\(project)/accounts:batchGet?maxResults=2&nextPageToken=u1")
        #expect(second.json["users"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } == ["u2", "u3"])
        let last = h.get("\(project)/accounts:batchGet?maxResults=2&nextPageToken=u3")
        #expect(last.json["users"]?.arrayValue?.count == 1)
        #expect(last.json["nextPageToken"] == nil)
        #expect(h.get("\(project)/accounts:batchGet").json["users"]?.arrayValue?.count == 5)
        #expect(h.get("\(project)/accounts:batchGet?maxResults=-1").json["nextPageToken"] == nil)
        #expect(h.get("\(project)/accounts:batchGet?maxResults=abc").status == 400)
        let empty = h.get("\(AuthHarness.it)/projects/empty/accounts:batchGet")
        #expect(empty.json == .object(["kind": "identitytoolkit#DownloadAccountResponse", "users": .array([])]))
    }

    @Test func batchDeleteHonoursDisabledAndForce() throws {
        let h = try AuthHarness()
        h.post("\(project)/accounts", .object(["localId": "on"]), admin: true)
        h.post("\(project)/accounts", .object(["localId": "off", "disabled": true]), admin: true)
        let r = h.post("\(project)/accounts:batchDelete", .object(["localIds": .array(["on", "off", "missing"])]), admin: true)
        #expect(r.json == .object(["errors": .array([.object(["index": 0, "localId": "on", "message": "NOT_DISABLED : Disable the account before batch deletion."])])]))
        #expect(h.lookupAdmin("off") == nil)
        let forced = h.post("\(project)/accounts:batchDelete", .object(["localIds": .array(["on"]), "force": true]), admin: true)
        #expect(forced.json == .object([:]))
        #expect(h.lookupAdmin("on") == nil)
        #expect(h.post("\(project)/accounts:batchDelete", .object(["localIds": .array([])]), admin: true).errorMessage == "LOCAL_ID_LIST_EXCEEDS_LIMIT")
    }

    @Test func queryCountsSortsAndFilters() throws {
        let h = try AuthHarness()
        for (id, email) in [("b", "zed@b.com"), ("a", "amy@b.com"), ("c", "max@b.com")] {
            h.post("\(project)/accounts", .object(["localId": .string(id), "email": .string(email)]), admin: true)
        }
        #expect(h.post("\(project)/accounts:query", .object(["returnUserInfo": false]), admin: true).json == .object(["recordsCount": "3"]))
        let all = h.post("\(project)/accounts:query", .object([:]), admin: true).json
        #expect(all["recordsCount"] == "3")
        #expect(all["userInfo"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } == ["a", "b", "c"])
        let byEmail = h.post("\(project)/accounts:query", .object(["sortBy": "USER_EMAIL", "order": "DESC", "limit": "2"]), admin: true).json
        #expect(byEmail["userInfo"]?.arrayValue?.compactMap { $0["email"]?.stringValue } == ["zed@b.com", "max@b.com"])
        let filtered = h.post("\(project)/accounts:query", .object(["expression": .array([.object(["email": "MAX@b.com"]), .object(["userId": "a"])])]),
                              admin: true).json
        #expect(filtered["userInfo"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } == ["a", "c"])
    }

    @Test func batchCreateImportsAccountsAndReportsRowErrors() throws {
        let h = try AuthHarness()
        h.signUp("exists@b.com")
        let r = h.post("\(project)/accounts:batchCreate", .object(["users": .array([
            .object(["localId": "imp1", "email": "Imp1@b.com", "displayName": "One", "customAttributes": #"{"role":"x"}"#,
                     "providerUserInfo": .array([.object(["providerId": "google.com", "rawId": "g1", "email": "imp1@b.com"])]),
                     "createdAt": "1600000000000", "emailVerified": true]),
            .object(["email": "nolocal@b.com"]),
            .object(["localId": "imp3", "email": "exists@b.com"]),
            .object(["localId": "imp4", "customAttributes": #"{"exp":1}"#]),
            .object(["localId": "imp5", "phoneNumber": "12345"]),
            .object(["localId": "imp6", "rawPassword": "raw-password"]),
        ])]), admin: true)
        #expect(r.json["kind"] == "identitytoolkit#UploadAccountResponse")
        let errors = r.json["error"]?.arrayValue?.map { ($0["index"]?.intValue ?? -1, $0["message"]?.stringValue ?? "") }
        #expect(errors?.map(\.0) == [1, 2, 3, 4])
        #expect(errors?[0].1 == "localId is missing")
        #expect(errors?[1].1 == "((Auth Emulator does not support importing duplicate email: exists@b.com))")
        #expect(errors?[2].1 == "Custom claims provided include a reserved claim.")
        #expect(errors?[3].1 == "phone number format is invalid")
        let user = try #require(h.lookupAdmin("imp1"))
        #expect(user["email"] == "imp1@b.com")
        #expect(user["createdAt"] == "1600000000000")
        #expect(user["providerUserInfo"]?.arrayValue?.compactMap { $0["providerId"]?.stringValue } == ["google.com"])
        #expect(h.signIn("imp6@b.com").errorMessage == "EMAIL_NOT_FOUND")
        let custom = h.post("\(AuthHarness.it)/accounts:signInWithCustomToken", .object(["token": #"{"uid":"imp1"}"#]))
        #expect(AuthHarness.decode(custom.json["idToken"]?.stringValue ?? "")?.payload["role"] == "x")
        let overwrite = h.post("\(project)/accounts:batchCreate", .object(["users": .array([.object(["localId": "imp1"])])]), admin: true)
        #expect(overwrite.json["error"]?[0]?["message"] == "localId belongs to an existing account - can not overwrite.")
        let allowed = h.post("\(project)/accounts:batchCreate", .object(["users": .array([.object(["localId": "imp1", "displayName": "New"])]),
                                                                         "allowOverwrite": true]), admin: true)
        #expect(allowed.json["error"] == .array([]))
        #expect(h.lookupAdmin("imp1")?["displayName"] == "New")
        #expect(h.post("\(project)/accounts:batchCreate", .object(["users": .array([])]), admin: true).errorMessage == "MISSING_USER_ACCOUNT")
        let dup = h.post("\(project)/accounts:batchCreate", .object(["users": .array([.object(["localId": "d"]), .object(["localId": "d"])])]), admin: true)
        #expect(dup.errorMessage == "DUPLICATE_LOCAL_ID : d")
    }

    /// `createdAt` and `lastLoginAt` are int64s: one that is no integer fails the whole request
    /// before any row is written, as the real front end's mapping of the body does. Read per row with
    /// `try?`, `createdAt: 1.5` quietly became the import's own time and `lastLoginAt` none.
    @Test(arguments: [("createdAt", JSON.double(1.5)), ("createdAt", "soon"), ("lastLoginAt", .double(1e300)), ("lastLoginAt", .array([]))])
    func batchCreateRefusesTimesThatAreNoIntegers(field: String, value: JSON) throws {
        let h = try AuthHarness()
        let r = h.post("\(project)/accounts:batchCreate", .object(["users": .array([
            .object(["localId": "ok", "createdAt": "1600000000000"]),
            .object(["localId": "bad", field: value]),
        ])]), admin: true)
        #expect(r.status == 400)
        #expect(r.errorMessage?.hasPrefix("Invalid JSON payload received. /users/1/\(field) should be") == true)
        #expect(h.lookupAdmin("ok") == nil && h.lookupAdmin("bad") == nil)
    }

    /// Imported password hashes are checked with the algorithm they were imported with, by
    /// production's conventions (see `ImportedHash`; known answers are in `ImportedHashTests`).
    @Test(arguments: ImportCase.all)
    func importedPasswordHashesSignIn(c: ImportCase) throws {
        let h = try AuthHarness()
        let salt = Array("NaCl-salt".utf8)
        var body = JSONObject([("hashAlgorithm", .string(c.algorithm)), ("users", .array([.object([
            "localId": .string("h-\(c.algorithm)"), "email": "hash@b.com",
            "passwordHash": .string(Base64URL.encode(try c.hash(Array("correct horse".utf8), salt)) + "="),
            "salt": .string(Data(salt).base64EncodedString()),
        ])]))])
        for (k, v) in c.parameters { body[k] = v }
        let r = h.post("\(project)/accounts:batchCreate", .object(body), admin: true)
        #expect(r.json["error"] == .array([]))
        let ok = h.signIn("hash@b.com", "correct horse")
        #expect(ok.status == 200)
        #expect(ok.json["localId"] == .string("h-\(c.algorithm)"))
        #expect(h.signIn("hash@b.com", "wrong horse").errorMessage == "INVALID_PASSWORD")
        // The imported hash keeps working: a second sign-in checks the same stored hash.
        #expect(h.signIn("hash@b.com", "correct horse").status == 200)
    }

    struct ImportCase: Sendable, CustomTestStringConvertible {
        let algorithm: String
        let parameters: [(String, JSON)]
        let hash: @Sendable ([UInt8], [UInt8]) throws -> [UInt8]
        var testDescription: String { "\(algorithm) \(parameters.map { "\($0.0)=\($0.1.serialized())" }.joined(separator: " "))" }

        static let key = Array("signer-key".utf8)
        static let keyParameter: (String, JSON) = ("signerKey", .string(Data(key).base64EncodedString()))
        static let all: [ImportCase] = [
            ImportCase(algorithm: "HMAC_SHA256", parameters: [keyParameter]) { p, s in HMAC.sha256(key: key, data: p + s) },
            ImportCase(algorithm: "HMAC_SHA256", parameters: [keyParameter, ("passwordHashOrder", "SALT_AND_PASSWORD")]) { p, s in
                HMAC.sha256(key: key, data: s + p)
            },
            ImportCase(algorithm: "HMAC_SHA1", parameters: [keyParameter]) { p, s in HMAC.sha1(key: key, data: p + s) },
            ImportCase(algorithm: "HMAC_MD5", parameters: [keyParameter]) { p, s in HMAC.mac(.md5, key: key, data: p + s) },
            ImportCase(algorithm: "HMAC_SHA512", parameters: [keyParameter]) { p, s in PasswordHashing.hmacSHA512(key: key, data: p + s) },
            ImportCase(algorithm: "SHA256", parameters: [("rounds", 1)]) { p, s in Digest.sha256(s + p) },
            ImportCase(algorithm: "SHA256", parameters: [("rounds", 3), ("passwordHashOrder", "PASSWORD_AND_SALT")]) { p, s in
                Digest.sha256(Digest.sha256(Digest.sha256(p + s)))
            },
            ImportCase(algorithm: "SHA1", parameters: [("rounds", 2)]) { p, s in Digest.sha1(Digest.sha1(s + p)) },
            ImportCase(algorithm: "SHA512", parameters: [("rounds", 2)]) { p, s in PasswordHashing.sha512(PasswordHashing.sha512(s + p)) },
            ImportCase(algorithm: "MD5", parameters: [("rounds", 0)]) { p, s in Array(Hex.encode(Digest.md5(s + p)).utf8) },
            ImportCase(algorithm: "MD5", parameters: [("rounds", 1)]) { p, s in Array(Hex.encode(Digest.md5(Digest.md5(s + p) + p)).utf8) },
            ImportCase(algorithm: "PBKDF2_SHA256", parameters: [("rounds", 1000)]) { p, s in
                KeyDerivation.pbkdf2SHA256(password: p, salt: s, iterations: 1000, length: 32)
            },
            ImportCase(algorithm: "PBKDF_SHA1", parameters: [("rounds", 1000)]) { p, s in
                try PasswordHashing.pbkdf2(.sha1, password: p, salt: s, iterations: 1000, length: 20)
            },
            ImportCase(algorithm: "SCRYPT", parameters: [keyParameter, ("saltSeparator", "Bw=="), ("rounds", 8), ("memoryCost", 14)]) { p, s in
                let derived = try PasswordHashing.scrypt(password: p, salt: s + [7], n: 1 << 14, r: 8, p: 1, length: 64)
                return try PasswordHashing.aes256CTR(key: Array(derived.prefix(32)), iv: [UInt8](repeating: 0, count: 16), key)
            },
            ImportCase(algorithm: "STANDARD_SCRYPT", parameters: [("cpuMemCost", 1024), ("blockSize", 8), ("parallelization", 2), ("dkLen", 48)]) { p, s in
                try PasswordHashing.scrypt(password: p, salt: s, n: 1024, r: 8, p: 2, length: 48)
            },
        ]
    }

    @Test(arguments: [
        (#"{"hashAlgorithm":"NOPE","users":[{"localId":"x"}]}"#, "INVALID_HASH_ALGORITHM"),
        (#"{"hashAlgorithm":"HMAC_SHA256","users":[{"localId":"x"}]}"#, "EMPTY_HASH_KEY"),
        (#"{"hashAlgorithm":"SHA256","rounds":9000,"users":[{"localId":"x"}]}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","rounds":8,"memoryCost":15,"users":[{"localId":"x"}]}"#, "INVALID_HASH_MEMORY_COST"),
    ])
    func importParameterErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        var headers = HTTPHeaders()
        headers.set("Authorization", "Bearer owner")
        let r = h.send("POST", "\(project)/accounts:batchCreate", body: Array(body.utf8), headers: headers)
        #expect(r.status == 400)
        #expect(r.errorMessage == message)
    }

    /// BCRYPT (no libcrypto implementation) and SHA with rounds 0 (which production never
    /// matches) import, but their accounts cannot sign in with a password.
    @Test(arguments: [#""hashAlgorithm":"BCRYPT""#, #""hashAlgorithm":"SHA256","rounds":0"#])
    func unverifiableHashesImportButCannotSignIn(options: String) throws {
        let h = try AuthHarness()
        var headers = HTTPHeaders()
        headers.set("Authorization", "Bearer owner")
        let body = #"{"# + options + #","users":[{"localId":"s","email":"s@b.com","passwordHash":"JDJhJDEwJGFiYw==","salt":"c2FsdA=="}]}"#
        let r = h.send("POST", "\(project)/accounts:batchCreate", body: Array(body.utf8), headers: headers)
        #expect(r.json["error"] == .array([]))
        // Exports (batchGet) return the hash exactly as imported.
        #expect(h.get("\(project)/accounts:batchGet").json["users"]?[0]?["passwordHash"] == "JDJhJDEwJGFiYw==")
        #expect(h.signIn("s@b.com", "anything").errorMessage == "INVALID_PASSWORD")
    }

    /// Setting a new password replaces the imported hash with Hearth's own scheme.
    @Test func passwordResetReplacesAnImportedHash() throws {
        let h = try AuthHarness()
        let salt = Array("s".utf8)
        let r = h.post("\(project)/accounts:batchCreate", .object([
            "hashAlgorithm": "SHA512", "rounds": 1,
            "users": .array([.object(["localId": "sx", "email": "sx@b.com", "salt": .string(Data(salt).base64EncodedString()),
                                      "passwordHash": .string(Data(PasswordHashing.sha512(salt + Array("old-pass".utf8))).base64EncodedString())])]),
        ]), admin: true)
        #expect(r.json["error"] == .array([]))
        let update = h.post("\(project)/accounts:update", .object(["localId": "sx", "password": "new-pass"]), admin: true)
        #expect(update.status == 200)
        #expect(h.signIn("sx@b.com", "old-pass").errorMessage == "INVALID_PASSWORD")
        #expect(h.signIn("sx@b.com", "new-pass").status == 200)
    }

    @Test func firebaseEmulatorExportHashesAreRehashed() throws {
        let h = try AuthHarness()
        let r = h.post("\(project)/accounts:batchCreate", .object(["users": .array([.object([
            "localId": "fe", "email": "fe@b.com", "passwordHash": "fakeHash:salt=fakeSaltAbc:password=from-export", "salt": "fakeSaltAbc",
        ])])]), admin: true)
        #expect(r.json["error"] == .array([]))
        #expect(h.signIn("fe@b.com", "from-export").status == 200)
    }

    @Test func sessionCookieCarriesIdTokenClaimsWithSessionIssuer() throws {
        let h = try AuthHarness()
        let up = h.signUp("sess@b.com")
        h.clock.advance(seconds: 30)
        let r = h.post("\(project):createSessionCookie", .object(["idToken": up["idToken"]!, "validDuration": "3600"]), admin: true)
        let cookie = try #require(AuthHarness.decode(r.json["sessionCookie"]?.stringValue ?? ""))
        #expect(cookie.payload["iss"] == "https://session.firebase.google.com/demo-hearth")
        #expect(cookie.payload["iat"] == .int(AuthHarness.start.unixSeconds + 30))
        #expect(cookie.payload["exp"] == .int(AuthHarness.start.unixSeconds + 3630))
        #expect(cookie.payload["user_id"] == up["localId"])
        #expect(h.post("\(project):createSessionCookie", .object(["idToken": up["idToken"]!, "validDuration": 60]), admin: true).errorMessage == "INVALID_DURATION")
        #expect(h.post("\(project):createSessionCookie", .object([:]), admin: true).errorMessage == "MISSING_ID_TOKEN")
    }

    @Test func v2ConfigGetAndPatchWithMask() throws {
        let h = try AuthHarness()
        let initial = h.get("\(AuthHarness.it.replacingOccurrences(of: "/v1", with: "/v2"))/projects/demo-hearth/config").json
        #expect(initial == .object(["signIn": .object(["allowDuplicateEmails": false]), "blockingFunctions": .object([:]),
                                    "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": false])]))
        var headers = HTTPHeaders()
        headers.set("Authorization", "Bearer owner")
        let patched = h.send("PATCH", "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config?updateMask=emailPrivacyConfig.enableImprovedEmailPrivacy",
                             body: Array(#"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true},"signIn":{"allowDuplicateEmails":true}}"#.utf8),
                             headers: headers)
        #expect(patched.json["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"] == true)
        #expect(patched.json["signIn"]?["allowDuplicateEmails"] == false)
        let emulatorView = h.get("/emulator/v1/projects/demo-hearth/config", admin: false).json
        #expect(emulatorView == .object(["signIn": .object(["allowDuplicateEmails": false]), "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": true])]))
    }
}
