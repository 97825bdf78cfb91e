import Foundation
import HearthClient
import Testing

/// The seed app's upload flow end to end, through HearthClient, against a real `hearth` process.
@Suite(.enabled(if: Flow.available, Flow.skipReason))
struct UploadFlowTests {
    @Test func happyPathWithClientSideMetadata() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")

        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg", expiresSeconds: 900)
        #expect(presigned.key.hasPrefix("users/\(alice.uid)/uploads/"))
        #expect(presigned.key.hasSuffix(".jpg"))
        #expect(presigned.expiresSeconds == 900)
        #expect(presigned.contentType == "image/jpeg")
        let receipt = try await alice.uploads.upload(Flow.jpegBytes, to: presigned)
        #expect(receipt.etag?.hasPrefix("\"") == true)

        // The client records the key (never the URL), as the seed's rules allow.
        let ref = try await alice.firestore.add(
            FileMetadata(ownerUid: alice.uid, s3Key: presigned.key, contentType: "image/jpeg", size: Flow.jpegBytes.count),
            to: "users/\(alice.uid)/files")
        let stored = try #require(try await alice.firestore.get(FileMetadata.self, at: ref.path))
        #expect(stored.s3Key == presigned.key)
        #expect(stored.ownerUid == alice.uid)
        #expect(stored.size == Flow.jpegBytes.count)
        #expect(stored.createdAt != nil)
        let listed = try await alice.firestore.query(FileMetadata.self, Query(collection: "files", parent: "users/\(alice.uid)"))
        #expect(listed.map(\.s3Key) == [presigned.key])

        let download = try await alice.uploads.presignDownload(s3Key: stored.s3Key)
        #expect(download.contentType == "image/jpeg")
        #expect(download.size == Int64(Flow.jpegBytes.count))
        #expect(try await alice.uploads.download(download) == Flow.jpegBytes)
    }

    @Test func happyPathWithServerSideComplete() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")

        let presigned = try await alice.uploads.presign(contentType: "application/pdf", fileExt: "pdf")
        #expect(presigned.expiresSeconds == 900)
        let pdf = Data("%PDF-1.7\n…\n%%EOF\n".utf8)
        try await alice.uploads.upload(pdf, to: presigned)
        let file = try await alice.uploads.complete(fileID: "report-1", key: presigned.key, originalName: "report.pdf")
        #expect(file.path == "users/\(alice.uid)/files/report-1")
        #expect(file.ownerUid == alice.uid)
        #expect(file.storage == "s3")
        #expect(file.s3Key == presigned.key)
        #expect(file.contentType == "application/pdf")
        #expect(file.size == Int64(pdf.count))
        #expect(file.status == "ready")
        #expect(Timestamp(rfc3339: file.createdAt) != nil)
        #expect(file.document?.name.hasSuffix("/documents/users/\(alice.uid)/files/report-1") == true)

        // The owner reads the document the server wrote, through the rules.
        let doc = try #require(try await alice.firestore.document(at: file.path))
        #expect(doc.fields["s3Key"] == .string(presigned.key))
        #expect(doc.fields["createdAt"]?.timestampValue != nil)
        #expect(doc.fields["originalName"] == .string("report.pdf"))

        let bytes = try await alice.uploads.download(try await alice.uploads.presignDownload(s3Key: file.s3Key))
        #expect(bytes == pdf)
    }

    @Test func resetWipesEverythingAndTheFlowStillWorks() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let p = try await alice.uploads.presign(contentType: "image/png", fileExt: "png")
        try await alice.uploads.upload(Data([0x89, 0x50, 0x4E, 0x47]), to: p)
        _ = try await alice.uploads.complete(fileID: "f", key: p.key)

        try await hearth.reset()
        // Accounts, objects and documents are gone…
        try await assertThrowsHearthError { try await hearth.instance.auth().signIn(email: "alice@example.com", password: "secret-alice") }
        let owner = try hearth.instance.firestore(token: .owner)
        #expect(try await owner.document(at: "users/\(alice.uid)/files/f") == nil)
        // …and the uploads bucket is back, so the flow works from scratch.
        let bob = try await FlowUser.signUp(hearth, "bob")
        let q = try await bob.uploads.presign(contentType: "image/png", fileExt: "png")
        try await bob.uploads.upload(Data([0x89, 0x50, 0x4E, 0x47]), to: q)
        #expect(try await bob.uploads.complete(fileID: "f", key: q.key).size == 4)
    }

    @Test func validationErrorsNameTheField() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let cases: [(String, String, Int?, String)] = [
            ("text/html", "html", nil, "contentType"),
            ("image/png", ".png", nil, "fileExt"),
            ("image/png", "png", 3601, "expiresSeconds"),
        ]
        for (type, ext, expires, field) in cases {
            let e = try await assertAPIError(httpStatus: 400, status: "INVALID_ARGUMENT") {
                try await alice.uploads.presign(contentType: type, fileExt: ext, expiresSeconds: expires)
            }
            #expect(e.field == field)
        }
    }

    @Test func signedTokensWorkAndTamperedOnesAreRefused() async throws {
        let hearth = try await Flow.start(["--token-signing", "rs256"])
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let p = try await alice.uploads.presign(contentType: "image/gif", fileExt: "gif")
        try await alice.uploads.upload(Data("GIF89a".utf8), to: p)
        _ = try await alice.uploads.complete(fileID: "g", key: p.key)

        // Same header and payload, another signature: refused in rs256 mode.
        let parts = alice.session.idToken.split(separator: ".")
        let forged = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
        let e = try await assertAPIError(httpStatus: 401) {
            try await alice.uploads.with(token: .idToken(String(forged))).presign(contentType: "image/gif", fileExt: "gif")
        }
        #expect(e.reason == "INVALID_ID_TOKEN")
    }

    @Test func anonymousAndCustomTokenUsersUploadToo() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let auth = try hearth.instance.auth()
        for session in [try await auth.signInAnonymously(), try await auth.signIn(customToken: AuthClient.unsignedCustomToken(uid: "device-42"))] {
            let user = try FlowUser(hearth, session)
            let p = try await user.uploads.presign(contentType: "application/octet-stream", fileExt: "bin")
            try await user.uploads.upload(Data([1, 2, 3]), to: p)
            let file = try await user.uploads.complete(fileID: "f", key: p.key)
            #expect(file.ownerUid == session.uid)
        }
    }
}

/// `hearth start --require-app-check`: the API wants an App Check token besides the ID token.
@Suite(.enabled(if: Flow.available, Flow.skipReason))
struct AppCheckFlowTests {
    @Test func requiredAppCheckRefusesRequestsWithoutAVerifiedToken() async throws {
        let hearth = try await Flow.start(["--require-app-check"])
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")

        let missing = try await assertAPIError(httpStatus: 401) { try await alice.uploads.presign(contentType: "image/png", fileExt: "png") }
        #expect(missing.reason == "APP_CHECK_TOKEN_MISSING")
        let forged = try hearth.instance.uploads(token: alice.session.bearer, appCheckToken: "not-a-token")
        let invalid = try await assertAPIError(httpStatus: 401) { try await forged.presign(contentType: "image/png", fileExt: "png") }
        #expect(invalid.reason == "APP_CHECK_TOKEN_INVALID")

        let appCheck = try await hearth.instance.auth().exchangeAppCheckDebugToken(
            projectID: hearth.instance.projectID, appID: "1:123456789:ios:abcdef", debugToken: "hearth-debug-token")
        let attested = try hearth.instance.uploads(token: alice.session.bearer, appCheckToken: appCheck.token)
        let p = try await attested.presign(contentType: "image/png", fileExt: "png")
        #expect(p.key.hasPrefix("users/\(alice.uid)/uploads/"))

        // App Check tokens expire on the emulator clock like everything else.
        try await hearth.advanceClock(by: (appCheck.ttlSeconds ?? 3600) + 1)
        let refreshed = try await hearth.instance.auth().refresh(alice.session)
        let late = try await assertAPIError(httpStatus: 401) {
            try await attested.with(token: refreshed.bearer).presign(contentType: "image/png", fileExt: "png")
        }
        #expect(late.reason == "APP_CHECK_TOKEN_INVALID")
    }
}
