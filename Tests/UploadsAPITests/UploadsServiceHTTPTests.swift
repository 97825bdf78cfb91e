import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

/// The service behind a real socket, called with URLSession as an app would.
@Suite struct UploadsServiceHTTPTests {
    func withServer(_ body: (Fixture, URL) async throws -> Void) async throws {
        let f = try Fixture()
        let server = HTTPServer(name: "api", configuration: .init(host: "127.0.0.1", port: 0, threads: 2), service: f.service.http)
        try server.start()
        defer { server.stop(graceSeconds: 0) }
        try await body(f, try #require(URL(string: server.url)))
    }

    func post(_ base: URL, _ path: String, token: String?, json: String, headers: [String: String] = [:]) async throws -> (Int, JSON, HTTPURLResponse) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, (try? JSON.parse(Array(data))) ?? .null, http)
    }

    @Test func theWholeContractOverASocket() async throws {
        try await withServer { f, base in
            let (s1, presign, _) = try await post(base, "v1/uploads/presign", token: "alice-token",
                                                  json: #"{"contentType": "image/jpeg", "fileExt": "jpg", "expiresSeconds": 900}"#)
            #expect(s1 == 200)
            let key = try #require(presign["key"]?.stringValue)
            f.objects.put(key: key, size: 3, contentType: "image/jpeg")
            let (s2, doc, _) = try await post(base, "v1/files/f1/complete", token: "alice-token", json: #"{"key": "\#(key)"}"#)
            #expect(s2 == 200)
            #expect(doc["s3Key"] == .string(key))
            let (s3, dl, _) = try await post(base, "v1/files/presign-download", token: "alice-token", json: #"{"s3Key": "\#(key)"}"#)
            #expect(s3 == 200)
            #expect(dl["getUrl"]?.stringValue?.contains(key) == true)
            let (s4, denied, _) = try await post(base, "v1/files/presign-download", token: "bob-token", json: #"{"s3Key": "\#(key)"}"#)
            #expect(s4 == 403)
            #expect(denied["error"]?["status"] == .string("PERMISSION_DENIED"))
            let (s5, _, r5) = try await post(base, "v1/uploads/presign", token: nil, json: "{}", headers: ["Origin": "http://localhost:3000"])
            #expect(s5 == 401)
            #expect(r5.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "http://localhost:3000")
            #expect(r5.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix("Bearer") == true)
        }
    }

    @Test func preflightOverASocket() async throws {
        try await withServer { _, base in
            var request = URLRequest(url: base.appendingPathComponent("v1/uploads/presign"))
            request.httpMethod = "OPTIONS"
            request.setValue("https://app.example", forHTTPHeaderField: "Origin")
            request.setValue("POST", forHTTPHeaderField: "Access-Control-Request-Method")
            request.setValue("authorization,content-type", forHTTPHeaderField: "Access-Control-Request-Headers")
            let (_, response) = try await URLSession.shared.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 204)
            #expect(http.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "https://app.example")
            #expect(http.value(forHTTPHeaderField: "Access-Control-Allow-Headers") == "authorization,content-type")
        }
    }
}
