import Foundation
import HearthCore
import HearthHTTP
import Synchronization
import Testing
@testable import FirestoreEmulator

/// A Write stream over WebChannel through the Firestore port's service, as the web SDK drives it:
/// the handshake with its headers in the body, a backchannel, a write, terminate.
struct WebChannelServiceTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /public/{d} { allow read, write: if true; }
          }
        }
        """

    func send(_ h: TestHarness, _ method: String, _ rpc: String, _ query: String, _ body: String = "") -> Response {
        let request = Request(method: method, target: "/google.firestore.v1.Firestore/\(rpc)/channel?" + query, body: Array(body.utf8))
        guard case .collect(_, _, let handler) = h.service.http.dispose(request) else {
            Issue.record("a channel request is collected")
            return Response(status: 0)
        }
        return handler(request)
    }

    /// `s` as encodeURIComponent leaves it (and more: only letters and digits stay).
    func form(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    /// The SID of a handshake's answer (`…[[0,["c","SID",…`).
    func sid(_ handshake: Response) throws -> String {
        let text = String(decoding: handshake.bodyBytes ?? [], as: UTF8.self)
        return try #require(text.split(separator: "\"").dropFirst(3).first.map(String.init))
    }

    /// What a backchannel has written so far.
    func read(_ r: Response) -> String {
        guard case .push(let source) = r.body else { return "" }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while case .bytes(let n) = buffer.withUnsafeMutableBytes({ source.next(into: $0) }) { out += buffer[..<n] }
        return String(decoding: out, as: UTF8.self)
    }

    /// What a backchannel has written once `done` holds of it (answers made on a pool thread come
    /// a moment later); what it had after 10 s otherwise.
    func read(_ r: Response, until done: (String) -> Bool) -> String {
        var seen = ""
        for _ in 0..<1_000 {
            seen += read(r)
            if done(seen) { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return seen
    }

    @Test func writeStreamEndToEnd() throws {
        let h = try TestHarness(rules: Self.rules)
        let db = "projects/\(h.project)/databases/(default)"
        let q = "database=" + form(db) + "&VER=8"
        // The handshake: a client's token in the encoded headers (rules apply: not owner).
        let hs = send(h, "POST", "Write", q + "&RID=100&CVER=22&X-HTTP-Session-Id=gsessionid&zx=a&t=1",
                      "headers=" + form("X-Goog-Api-Client:gl-js/\r\n") + "&count=1&ofs=0&req0___data__=" + form(#"{"database":"\#(db)"}"#))
        #expect(hs.status == 200)
        #expect(hs.headers["Access-Control-Allow-Credentials"] == "true")
        let text = String(decoding: hs.bodyBytes ?? [], as: UTF8.self)
        let sid = try sid(hs)
        #expect(text == "\(text.split(separator: "\n")[0])\n[[0,[\"c\",\"\(sid)\",\"\",8,12,30000]]]")
        let sidQ = "&SID=" + form(sid)

        let back = send(h, "GET", "Write", q + sidQ + "&RID=rpc&AID=0&CI=0&TYPE=xmlhttp")
        #expect(back.status == 200)
        // The handshake's answer, encoded on the session's queue: array 1, or 2 after the no-op a
        // backchannel opened before it opens with.
        let hello = read(back) { $0.contains("streamId") }
        #expect(hello.contains(#"[[1,[{"streamId":"#) || hello.contains(#"[[2,[{"streamId":"#))
        let helloID = hello.contains(#"[[1,[{"streamId":"#) ? 1 : 2
        let answer = send(h, "POST", "Write", q + sidQ + "&RID=101&AID=\(helloID)", "count=1&ofs=1&req0___data__=" + form(
            #"{"streamToken":"MA==","writes":[{"update":{"name":"\#(db)/documents/public/a","fields":{"n":{"integerValue":"1"}}}}]}"#))
        // A backchannel is open; the POST is answered without waiting for the commit, so the last
        // array it names is 1 or (the commit done already) 2.
        let forward = String(decoding: answer.bodyBytes ?? [], as: UTF8.self)
        let array = forward.split(separator: "\n").last.map(String.init) ?? ""
        #expect(array.hasPrefix("[1,\(helloID),") || array.hasPrefix("[1,\(helloID + 1),"), "\(forward)")
        let written = read(back) { $0.contains("commitTime") }
        #expect(written.contains(#"[[\#(helloID + 1),[{"streamToken":"MQ==","writeResults":[{"updateTime":"#) && written.contains("commitTime"))
        #expect(h.call("GET", h.api("/public/a")).status == 200)

        #expect(send(h, "GET", "Write", q + sidQ + "&RID=102&TYPE=terminate").status == 200)
        let gone = send(h, "POST", "Write", q + sidQ + "&RID=103&AID=\(helloID + 1)", "count=1&ofs=2&req0___data__=%7B%7D")
        #expect(gone.status == 400 && String(decoding: gone.bodyBytes ?? [], as: UTF8.self).contains("Unknown SID"))
        #expect(h.service.webChannels.count == 0)
    }

    @Test func aDeniedListenTargetIsRemovedWithItsCause() throws {
        let h = try TestHarness(rules: Self.rules)
        let db = "projects/\(h.project)/databases/(default)"
        let q = "database=" + form(db) + "&VER=8"
        let target = #"{"database":"\#(db)","addTarget":{"query":{"parent":"\#(db)/documents","structuredQuery":{"from":[{"collectionId":"private"}]}},"targetId":4}}"#
        let sid = try sid(send(h, "POST", "Listen", q + "&RID=1&CVER=22", "count=1&ofs=0&req0___data__=" + form(target)))
        let back = send(h, "GET", "Listen", q + "&SID=" + form(sid) + "&RID=rpc&AID=0&CI=0&TYPE=xmlhttp")
        var seen = ""
        for _ in 0..<200 where !seen.contains("REMOVE") {
            seen += read(back)
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(seen.contains(#"{"targetChange":{"targetChangeType":"ADD","targetIds":[4]}}"#))
        #expect(seen.contains(#""targetChangeType":"REMOVE","targetIds":[4],"cause":{"code":7"#))
        _ = send(h, "POST", "Listen", q + "&SID=" + form(sid) + "&RID=2&TYPE=terminate")
        #expect(h.service.webChannels.count == 0)
    }

    /// A Write on a channel is committed where the gRPC Write stream's are (the group commit's
    /// drainer), not on the HTTP worker that received it: with the writer held by another
    /// transaction, the forward POST is answered at once and the write's answer follows the
    /// writer's release. Before, the POST waited for the commit (and the writer) on its worker.
    @Test func aForwardPOSTDoesNotWaitForItsCommit() throws {
        let h = try TestHarness(rules: Self.rules)
        let db = "projects/\(h.project)/databases/(default)"
        let q = "database=" + form(db) + "&VER=8"
        let sid = try sid(send(h, "POST", "Write", q + "&RID=1&CVER=22", "count=1&ofs=0&req0___data__=" + form(#"{"database":"\#(db)"}"#)))
        let sidQ = "&SID=" + form(sid)
        let back = send(h, "GET", "Write", q + sidQ + "&RID=rpc&AID=0&CI=0&TYPE=xmlhttp")
        #expect(read(back) { $0.contains("streamId") }.contains("streamId"))

        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let storage = h.service.storage
        Thread.detachNewThread {
            _ = try? storage.write { _ in
                entered.signal()
                release.wait()
            }
        }
        entered.wait()
        let answered = DispatchSemaphore(value: 0)
        let status = Mutex<Int>(0)
        let post = q + sidQ + "&RID=2&AID=1"
        let write = "count=1&ofs=1&req0___data__=" + form(
            #"{"streamToken":"MA==","writes":[{"update":{"name":"\#(db)/documents/public/held","fields":{}}}]}"#)
        Thread.detachNewThread { [self] in
            let r = send(h, "POST", "Write", post, write)
            status.withLock { $0 = r.status }
            answered.signal()
        }
        // Bounded only so that the old behaviour fails instead of hanging: the answer needs no commit.
        let tookIt = answered.wait(timeout: .now() + 30) == .success
        #expect(tookIt, "the forward POST waited for its commit")
        // The writer is still held: the write's answer cannot have been made.
        #expect(!read(back).contains("writeResults"))
        release.signal()
        if !tookIt { answered.wait() }
        #expect(status.withLock { $0 } == 200)
        #expect(read(back) { $0.contains("writeResults") }.contains(#"[{"streamToken":"MQ==","writeResults":[{"updateTime":"#))
        #expect(h.call("GET", h.api("/public/held")).status == 200)
        _ = send(h, "GET", "Write", q + sidQ + "&RID=3&TYPE=terminate")
    }

    /// Closure's fast handshake: a GET with the forward body in `$req`, answered as the official
    /// emulator answers it — the `c` array in `X-HTTP-Initial-Response`, the body the backchannel.
    @Test func theFastHandshake() throws {
        let h = try TestHarness(rules: Self.rules)
        let db = "projects/\(h.project)/databases/(default)"
        let q = "database=" + form(db) + "&VER=8&RID=7&CVER=22&X-HTTP-Session-Id=gsessionid"
        let req = "count=1&ofs=0&req0___data__=" + form(#"{"database":"\#(db)"}"#)
        let hs = send(h, "GET", "Write", q + "&%24req=" + form(req) + "&SID=null&zx=z&t=1")
        #expect(hs.status == 200)
        let initial = try #require(hs.headers["X-HTTP-Initial-Response"])
        let sid = try #require(initial.split(separator: "\"").dropFirst(3).first.map(String.init))
        #expect(initial == "[[0,[\"c\",\"\(sid)\",\"\",8,12,30000]]]")
        #expect(hs.headers["Access-Control-Expose-Headers"]?.contains("x-http-initial-response") == true)
        // The body is the session's backchannel: a no-op first (array 1), then the handshake's answer.
        let text = read(hs) { $0.contains("streamId") }
        #expect(text.hasPrefix("14\n[[1,[\"noop\"]]]"))
        #expect(text.contains(#"[[2,[{"streamId":"#))
        // The session is an ordinary one: a forward POST writes, the answer comes on the same body.
        let sidQ = "&SID=" + form(sid)
        _ = send(h, "POST", "Write", "database=" + form(db) + "&VER=8" + sidQ + "&RID=8&AID=2", "count=1&ofs=1&req0___data__=" + form(
            #"{"streamToken":"MA==","writes":[{"update":{"name":"\#(db)/documents/public/fast","fields":{}}}]}"#))
        #expect(read(hs) { $0.contains("writeResults") }.contains("writeResults"))
        #expect(h.call("GET", h.api("/public/fast")).status == 200)
        // Without `$req`: 400 and an empty body, as the emulator answers.
        let bad = send(h, "GET", "Write", q + "&SID=null")
        #expect(bad.status == 400 && (bad.bodyBytes ?? [1]).isEmpty)
        _ = send(h, "GET", "Write", "database=" + form(db) + "&VER=8" + sidQ + "&RID=9&TYPE=terminate")
    }

    /// The token a handshake's `$httpHeaders` names is the stream's caller (older SDKs, and any
    /// fast handshake, send their headers there); without one the rules see no auth.
    @Test(arguments: [false, true]) func httpHeadersNameTheCaller(fast: Bool) throws {
        let h = try TestHarness(rules: """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /private/{d} { allow read: if request.auth.uid == 'alice'; }
              }
            }
            """)
        let db = "projects/\(h.project)/databases/(default)"
        let target = #"{"database":"\#(db)","addTarget":{"documents":{"documents":["\#(db)/documents/private/p"]},"targetId":2}}"#
        let cases: [(String?, Bool)] = [(nil, false), ("Bearer " + TestHarness.token("alice"), true),
                                        ("Bearer " + TestHarness.token("bob"), false)]
        for (authorization, allowed) in cases {
            var headers = "X-Goog-Api-Client:gl-js/ fire/11.0.0\r\nContent-Type:text/plain\r\n"
            if let authorization { headers += "Authorization:\(authorization)\r\n" }
            let q = "database=" + form(db) + "&VER=8&RID=1&CVER=22&%24httpHeaders=" + form(headers)
            let body = "count=1&ofs=0&req0___data__=" + form(target)
            let back: Response
            var sid: String
            if fast {
                back = send(h, "GET", "Listen", q + "&%24req=" + form(body) + "&SID=null")
                let initial = back.headers["X-HTTP-Initial-Response"] ?? ""
                sid = initial.split(separator: "\"").dropFirst(3).first.map(String.init) ?? ""
            } else {
                sid = try self.sid(send(h, "POST", "Listen", q, body))
                back = send(h, "GET", "Listen", "database=" + form(db) + "&VER=8&SID=" + form(sid) + "&RID=rpc&AID=0&CI=0&TYPE=xmlhttp")
            }
            let seen = read(back) { $0.contains("CURRENT") || $0.contains("REMOVE") }
            #expect(seen.contains("CURRENT") == allowed, "\(authorization ?? "no token"): \(seen)")
            #expect(seen.contains(#""targetChangeType":"REMOVE","targetIds":[2],"cause":{"code":7"#) == !allowed)
            _ = send(h, "GET", "Listen", "database=" + form(db) + "&VER=8&SID=" + form(sid) + "&RID=2&TYPE=terminate")
        }
    }
}
