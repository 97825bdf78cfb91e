import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import HearthUI

/// A change feed the test drives.
final class FakeDocumentFeed: DocumentChangeFeed, @unchecked Sendable {
    private let lock = NSLock()
    private var handlers: [@Sendable ([DocumentChangeNotice]) -> Void] = []
    func watchDocumentChanges(_ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void) {
        lock.withLock { handlers.append(handler) }
    }
    func commit(_ notices: [DocumentChangeNotice]) {
        for h in lock.withLock({ handlers }) { h(notices) }
    }
}

extension EventStream {
    /// Everything queued now, as the listener would write it.
    func drain() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case .bytes(let n) = buffer.withUnsafeMutableBytes({ next(into: $0) }) { out += buffer[0..<n] }
        return String(decoding: out, as: UTF8.self)
    }
}

@Suite struct LiveEventsTests {
    static func entry(_ service: String, _ status: Int, path: String = "/p") -> RequestLog.Entry {
        RequestLogTests.entry(service, status, path: path)
    }

    @Test func requestEventsFollowTheFilterWithTheirSeqAsID() {
        let log = RequestLog()
        let live = LiveEvents(log: log, documents: nil)
        var f = RequestLog.Filter()
        f.status = "403"
        let s = live.open(requests: f, documents: false, lastEventID: nil)
        #expect(s.drain().hasPrefix("retry: 2000\nevent: hello\ndata: {\"latest\":0,\"resumed\":false}\n\n"))
        log.append(Self.entry("firestore", 200))
        log.append(Self.entry("firestore", 403, path: "/denied"))
        let text = s.drain()
        #expect(!text.contains("\"status\":200"))
        #expect(text.hasPrefix("id: 2\nevent: request\ndata: {\"seq\":2,"))
        #expect(text.contains("\"path\":\"/denied\""))
        #expect(text.hasSuffix("}\n\n"))
        #expect(live.streamCount == 1)
        s.close()
        #expect(live.streamCount == 0)
    }

    @Test func aReconnectReplaysTheEntriesAfterLastEventIDOrSaysSomeAreGone() {
        let log = RequestLog(capacity: 5)
        let live = LiveEvents(log: log, documents: nil)
        for i in 1...4 { log.append(Self.entry("s3", 200, path: "/\(i)")) }
        let s = live.open(requests: RequestLog.Filter(), documents: false, lastEventID: 2)
        let text = s.drain()
        #expect(text.contains("\"resumed\":true"))
        #expect(!text.contains("event: reset"))
        #expect(text.components(separatedBy: "event: request").count == 3)
        #expect(text.range(of: "id: 3\n")!.lowerBound < text.range(of: "id: 4\n")!.lowerBound)
        for i in 5...9 { log.append(Self.entry("s3", 200, path: "/\(i)")) }
        // Entries 3 and 4 have left the ring (it keeps 5..9): the page must reload.
        let late = live.open(requests: RequestLog.Filter(), documents: false, lastEventID: 2).drain()
        #expect(late.contains("event: reset"))
        #expect(late.contains("id: 5\n") && late.contains("id: 9\n"))
    }

    @Test func documentChangesGoToDocumentStreamsOnly() {
        let log = RequestLog()
        let feed = FakeDocumentFeed()
        let live = LiveEvents(log: log, documents: feed)
        let docs = live.open(requests: nil, documents: true, lastEventID: nil)
        let reqs = live.open(requests: RequestLog.Filter(), documents: false, lastEventID: nil)
        _ = docs.drain(); _ = reqs.drain()
        feed.commit([DocumentChangeNotice(database: "projects/p/databases/(default)", path: "notes/n1", kind: .created,
                                          time: Instant(unixMicros: 1_000_000))])
        log.append(Self.entry("auth", 200))
        let d = docs.drain()
        #expect(d == "event: document\ndata: {\"database\":\"projects/p/databases/(default)\",\"path\":\"notes/n1\",\"change\":\"created\",\"time\":\"1970-01-01T00:00:01.000000Z\"}\n\n")
        #expect(reqs.drain().contains("event: request"))
    }

    @Test func aSlowClientIsDroppedNotBufferedForever() {
        let log = RequestLog()
        let live = LiveEvents(log: log, documents: nil, maxQueuedBytes: 4096)
        let slow = live.open(requests: RequestLog.Filter(), documents: false, lastEventID: nil)
        let fast = live.open(requests: RequestLog.Filter(), documents: false, lastEventID: nil)
        for _ in 0..<100 {
            log.append(Self.entry("s3", 200))
            _ = fast.drain()
        }
        #expect(slow.queuedBytes <= 4096)
        let text = slow.drain()
        #expect(text.hasPrefix("event: overflow\n"))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(buffer.withUnsafeMutableBytes { slow.next(into: $0) } == .end)
        #expect(!slow.send("event: x\n\n"))  // a dropped stream takes nothing more
        #expect(fast.send("event: x\n\n"))
    }

    @Test func heartbeatsKeepEveryStreamTalking() {
        let live = LiveEvents(log: RequestLog(), documents: nil, heartbeatSeconds: 0.05)
        let s = live.open(requests: nil, documents: true, lastEventID: nil)
        _ = s.drain()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains(": ping\n\n") && Date() < deadline {
            usleep(20_000)
            text += s.drain()
        }
        #expect(text.contains(": ping\n\n"))
    }
}
