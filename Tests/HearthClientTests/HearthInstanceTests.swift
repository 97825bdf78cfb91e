import Foundation
import Testing
@testable import HearthClient

@Suite struct HearthInstanceTests {
    static let ready = """
    {
      "version": "0.1.0", "pid": 1234, "project": "demo-hearth", "dataDir": null,
      "services": {
        "hub": {"host": "127.0.0.1", "port": 40001, "url": "http://127.0.0.1:40001"},
        "auth": {"host": "127.0.0.1", "port": 40002, "url": "http://127.0.0.1:40002"},
        "firestore": {"host": "127.0.0.1", "port": 40003, "url": "http://127.0.0.1:40003"},
        "s3": {"host": "127.0.0.1", "port": 40004, "url": "http://127.0.0.1:40004"},
        "api": {"host": "127.0.0.1", "port": 40005, "url": "http://127.0.0.1:40005"}
      },
      "env": {"FIREBASE_AUTH_EMULATOR_HOST": "127.0.0.1:40002", "GCLOUD_PROJECT": "demo-hearth"}
    }
    """

    @Test func readyJSONIsParsed() throws {
        let i = try HearthInstance(readyJSON: Data(Self.ready.utf8))
        #expect(i.projectID == "demo-hearth")
        #expect(try i.hubURL.absoluteString == "http://127.0.0.1:40001")
        #expect(try i.apiURL.absoluteString == "http://127.0.0.1:40005")
        #expect(i.services["s3"]?.port == 40004)
        #expect(i.environment["FIREBASE_AUTH_EMULATOR_HOST"] == "127.0.0.1:40002")
        let auth = try i.auth()
        #expect(try auth.url(service: "identitytoolkit.googleapis.com", path: "/v1/accounts:signUp").absoluteString
            == "http://127.0.0.1:40002/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key")
        #expect(try i.firestore().databaseRoot == "projects/demo-hearth/databases/(default)")
    }

    @Test func missingServicesAreReported() throws {
        let i = try HearthInstance(readyJSON: Data(#"{"services": {"hub": {"host": "h", "port": 1, "url": "http://h:1"}}}"#.utf8))
        #expect(throws: HearthClientError.self) { try i.apiURL }
        #expect(i.projectID == "demo-hearth")
    }

    @Test(arguments: ["", "{}", #"{"services": []}"#, "not json"])
    func malformedReadyFilesThrow(_ text: String) {
        #expect(throws: HearthClientError.self) { try HearthInstance(readyJSON: Data(text.utf8)) }
    }

    @Test func productionURLs() throws {
        let auth = AuthClient(endpoint: .production, apiKey: "AIza key")
        #expect(try auth.url(service: "securetoken.googleapis.com", path: "/v1/token").absoluteString
            == "https://securetoken.googleapis.com/v1/token?key=AIza%20key")
    }

    @Test func unsignedCustomTokensCarryTheUID() throws {
        let token = AuthClient.unsignedCustomToken(uid: "user-1", now: Date(timeIntervalSince1970: 1000))
        #expect(token.hasSuffix("."))
        let claims = try #require(IDTokenClaims(jwt: token))
        #expect(claims.json.contains(#""uid":"user-1""#))
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1000))
    }

    @Test func locatingTheBinaryWalksUpFromTheSourceFile() throws {
        let fm = FileManager.default
        let root = (NSTemporaryDirectory() as NSString).appendingPathComponent("hearth-locate-\(UUID().uuidString)")
        defer { try? fm.removeItem(atPath: root) }
        try fm.createDirectory(atPath: root + "/.build/debug", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/Tests/X", withIntermediateDirectories: true)
        _ = fm.createFile(atPath: root + "/.build/debug/hearth", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        try fm.createDirectory(atPath: root + "/rules", withIntermediateDirectories: true)
        _ = fm.createFile(atPath: root + "/rules/firestore.rules", contents: Data())
        #expect(HearthTestServer.locateBinary(explicit: root + "/.build/debug/hearth") == root + "/.build/debug/hearth")
        #expect(HearthTestServer.locateBinary(explicit: root + "/missing") == nil)
        if ProcessInfo.processInfo.environment["HEARTH_BIN"] == nil {
            #expect(HearthTestServer.locateBinary(filePath: root + "/Tests/X/FlowTests.swift") == root + "/.build/debug/hearth")
        }
        // The current directory's rules/firestore.rules wins (as for `hearth start`), then the one above the test file.
        let here = FileManager.default.currentDirectoryPath + "/rules/firestore.rules"
        let fromCwd: String? = fm.fileExists(atPath: here) ? here : nil
        #expect(HearthTestServer.defaultRules(filePath: root + "/Tests/X/FlowTests.swift") == fromCwd ?? root + "/rules/firestore.rules")
        #expect(HearthTestServer.defaultRules(filePath: "/nowhere/x.swift") == fromCwd)
        #expect(HearthTestServer.absoluteRulesPath("open") == "open")
        #expect(HearthTestServer.absoluteRulesPath("r/x.rules") == FileManager.default.currentDirectoryPath + "/r/x.rules")
    }
}
