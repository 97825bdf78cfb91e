import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import FirestoreEmulator
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same API over a real socket (libmicrohttpd), as clients see it.
@Suite struct ServerTests {
    final class Box: @unchecked Sendable {
        var status = 0
        var body = Data()
        var headers: [AnyHashable: Any] = [:]
    }

    static func send(_ method: String, _ url: String, _ body: String? = nil, token: String? = "owner") -> Box {
        var req = URLRequest(url: URL(string: url)!)
        req.httpMethod = method
        if let body { req.httpBody = Data(body.utf8) }
        if let token { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        req.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: req) { data, response, _ in
            let http = response as? HTTPURLResponse
            box.status = http?.statusCode ?? -1
            box.headers = http?.allHeaderFields ?? [:]
            box.body = data ?? Data()
            done.signal()
        }.resume()
        done.wait()
        return box
    }

    @Test func restOverARealSocket() throws {
        let h = try TestHarness(rulesPath: ShippedRulesTests.rulesPath)
        let server = HTTPServer(name: "firestore", configuration: .init(host: "127.0.0.1", port: 0), service: h.service.http)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let base = "http://127.0.0.1:\(server.port)"
        #expect(String(decoding: Self.send("GET", base + "/").body, as: UTF8.self) == "Ok")

        let root = "\(base)/v1/projects/\(h.project)/databases/%28default%29/documents"
        let uid = "u1"
        let token = TestHarness.token(uid)
        let commit = #"{"writes":[{"update":{"name":"\#(h.root)/users/u1/files/f1","fields":{"ownerUid":{"stringValue":"u1"},"storage":{"stringValue":"s3"},"s3Key":{"stringValue":"users/u1/uploads/\#(ShippedRulesTests.uuid).jpg"},"contentType":{"stringValue":"image/jpeg"},"status":{"stringValue":"ready"}}},"updateTransforms":[{"fieldPath":"createdAt","setToServerValue":"REQUEST_TIME"}],"currentDocument":{"exists":false}}]}"#
        let denied = Self.send("POST", root + ":commit", commit, token: TestHarness.token("u2"))
        #expect(denied.status == 403)
        let denial = try JSON.parse(denied.body)
        #expect(denial["error"]?["status"]?.stringValue == "PERMISSION_DENIED")
        let ok = Self.send("POST", root + ":commit", commit, token: token)
        #expect(ok.status == 200)
        let got = Self.send("GET", root + "/users/u1/files/f1", token: token)
        #expect(got.status == 200)
        #expect(try JSON.parse(got.body)["fields"]?["status"]?["stringValue"]?.stringValue == "ready")
        let query = Self.send("POST", root + "/users/u1:runQuery", #"{"structuredQuery":{"from":[{"collectionId":"files"}],"where":{"fieldFilter":{"field":{"fieldPath":"status"},"op":"EQUAL","value":{"stringValue":"ready"}}}}}"#, token: token)
        #expect(query.status == 200)
        #expect(try JSON.parse(query.body).arrayValue?.count == 1)
        let notJWT = Self.send("GET", root + "/users/u1/files/f1", token: "garbage")
        #expect(notJWT.status == 400)
        let cleared = Self.send("DELETE", "\(base)/emulator/v1/projects/\(h.project)/databases/(default)/documents", token: nil)
        #expect(cleared.status == 200)
        #expect(Self.send("GET", root + "/users/u1/files/f1", token: token).status == 404)
    }
}

@Suite struct FileDatabaseTests {
    @Test func concurrentWritersAndReadersOnAWALDatabase() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fs-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let h = try TestHarness(databasePath: dir.appendingPathComponent("hearth.sqlite").path)
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<40 {
                let w = h.call("PATCH", h.api("/w\(worker)/d\(i)"), .object(["fields": .object(["i": int(Int64(i)), "w": int(Int64(worker))])]))
                if w.status != 200 { failures.increment() }
                let q = h.query(sq("w\(worker)", where: ff("i", "LESS_THAN_OR_EQUAL", int(Int64(i)))))
                if q.status != 200 || q.ids.count != i + 1 { failures.increment() }
            }
        }
        #expect(failures.count == 0)
        // Data survives reopening the file.
        let reopened = try TestHarness(databasePath: dir.appendingPathComponent("hearth.sqlite").path)
        #expect(reopened.call("GET", reopened.api("/w3/d39")).json["fields"]?["i"] == int(39))
        let later = reopened.put("w0/new", [:])["updateTime"]?.stringValue ?? ""
        let earlier = h.call("GET", h.api("/w3/d39")).json["updateTime"]?.stringValue ?? ""
        #expect(later > earlier)
    }
}
