import Foundation
import HearthCore

/// What a stream's sink receives at once: a list of events, or — a commit's usual fan-out — one
/// snapshot shared by every listener of the collection the commit wrote, with this stream's target
/// ids.
///
/// A commit reaching a thousand listeners of one collection (each with its own target, no filter)
/// sends each of them the same document changes and the same global NO_CHANGE; only the target
/// ids differ. The shard makes that snapshot once per commit (`Shared`) and hands each stream a
/// reference to it, where it built, weighed and handed over an event list per listener (each
/// carrying a copy of the document), and the transport encodes the snapshot's documents once
/// (`Shared.cached`) rather than once more per listener.
struct ListenBatch: Sendable {
    /// One commit's changes to one collection, as every whole-collection listener of it gets them.
    final class Shared: @unchecked Sendable {
        /// One document's change, in the collection's key order.
        enum Change: Sendable {
            /// The document was created or updated (a `documentChange` naming the listener's targets).
            case changed(StoredDocument)
            /// The document was deleted (a `documentDelete`).
            case deleted(ResourcePath)
        }

        let changes: [Change]
        /// The commit's time: the deletes' and the closing NO_CHANGE's read time.
        let readTime: Instant
        /// The NO_CHANGE's resume token (`ListenShard.snapshotEnd`).
        let resumeToken: [UInt8]
        /// Roughly what one listener's copy weighs on the wire (`ListenShard.weight` of each event).
        let weight: Int

        // Under `lock`.
        private let lock = NSLock()
        private var transportCache: AnyObject?

        init(changes: [Change], readTime: Instant, resumeToken: [UInt8]) {
            self.changes = changes
            self.readTime = readTime
            self.resumeToken = resumeToken
            var w = 64
            for c in changes {
                if case .changed(let d) = c { w += d.storageSize + 32 } else { w += 64 }
            }
            weight = w
        }

        /// What the transport made of this snapshot once (its encoded documents): `make` runs for
        /// the first stream written, every later one gets its result. The connections' threads
        /// write the same snapshot at the same time, hence the lock.
        func cached<T: AnyObject>(_ make: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            if let made = transportCache as? T { return made }
            let made = make()
            transportCache = made
            return made
        }

        /// The events this snapshot is for a stream whose target is `targetIDs`: its changes, then
        /// the global NO_CHANGE.
        func events(_ targetIDs: [Int32]) -> [ListenEvent] {
            var out: [ListenEvent] = []
            out.reserveCapacity(changes.count + 1)
            appendChanges(targetIDs, into: &out)
            out.append(.targetChange(.noChange, targetIDs: [], cause: nil, readTime: readTime, resumeToken: resumeToken))
            return out
        }

        /// The snapshot's changes as a target `targetIDs` gets them, without the closing NO_CHANGE.
        func appendChanges(_ targetIDs: [Int32], into out: inout [ListenEvent]) {
            for c in changes {
                switch c {
                case .changed(let d): out.append(.documentChange(d, targetIDs: targetIDs))
                case .deleted(let p): out.append(.documentDelete(p, removedTargetIDs: targetIDs, readTime: readTime))
                }
            }
        }
    }

    enum Content: Sendable {
        case events([ListenEvent])
        case shared(Shared, targetIDs: [Int32])
    }

    let content: Content

    init(_ events: [ListenEvent]) { content = .events(events) }

    init(_ shared: Shared, targetIDs: [Int32]) { content = .shared(shared, targetIDs: targetIDs) }

    /// The batch as a list of events (a shared snapshot written out for its stream).
    var events: [ListenEvent] {
        switch content {
        case .events(let events): events
        case .shared(let shared, let ids): shared.events(ids)
        }
    }

    /// How many events the batch holds.
    var count: Int {
        switch content {
        case .events(let events): events.count
        case .shared(let shared, _): shared.changes.count + 1
        }
    }
}
