import Foundation
import HearthCore
import HearthHTTP
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
        #expect(read(back).contains(#"[[1,[{"streamId":"#))
        let answer = send(h, "POST", "Write", q + sidQ + "&RID=101&AID=1", "count=1&ofs=1&req0___data__=" + form(
            #"{"streamToken":"MA==","writes":[{"update":{"name":"\#(db)/documents/public/a","fields":{"n":{"integerValue":"1"}}}}]}"#))
        // A backchannel is open, the write's answer is array 2, its bytes not yet read from it.
        let forward = String(decoding: answer.bodyBytes ?? [], as: UTF8.self)
        #expect(forward.hasPrefix("9\n[1,2,") && forward != "9\n[1,2,0]")
        let written = read(back)
        #expect(written.contains(#"[[2,[{"streamToken":"MQ==","writeResults":[{"updateTime":"#) && written.contains("commitTime"))
        #expect(h.call("GET", h.api("/public/a")).status == 200)

        #expect(send(h, "GET", "Write", q + sidQ + "&RID=102&TYPE=terminate").status == 200)
        let gone = send(h, "POST", "Write", q + sidQ + "&RID=103&AID=2", "count=1&ofs=2&req0___data__=%7B%7D")
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
}
