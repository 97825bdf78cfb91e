import Foundation
import HearthCore

/// Collects what one write transaction changes and publishes it to the change feed once the
/// transaction has committed (or withdraws its place when it rolled back).
///
/// Used as: make one before `write`, `begin` inside the body once the commit time is taken (on the
/// writer, so places follow commit order), `record` each stored change, `publish` after `write`
/// returned, and `finish` in a `defer` (withdraws a place taken by a body that failed).
final class ChangeRecorder: @unchecked Sendable {
    // Touched only by the calling thread and the writer body it waits on, never concurrently.
    private let feed: ChangeFeed
    private let database: DatabaseID
    private var ticket: ChangeFeed.Ticket?
    private var commitTime = Instant(unixMicros: 0)
    private var space: Int64 = 0
    private var documents: [CommittedChange.Document] = []
    private var done = false

    init(feed: ChangeFeed, database: DatabaseID) {
        self.feed = feed
        self.database = database
    }

    /// Takes this commit's place in commit order (call on the writer, after `commitTime(now:)`);
    /// `space` is the one the transaction writes.
    func begin(at commitTime: Instant, space: Int64) {
        ticket = feed.reserve()
        self.commitTime = commitTime
        self.space = space
    }

    /// Notes one stored change.
    func record(_ path: ResourcePath, before: StoredDocument?, after: StoredDocument?) {
        documents.append(CommittedChange.Document(path: path, before: before, after: after))
    }

    /// Publishes the committed changes (the transaction's COMMIT succeeded).
    func publish() {
        guard let ticket, !done else { return }
        done = true
        feed.publish(ticket, CommittedChange(database: database, commitTime: commitTime, kind: .documents(documents, space: space)))
    }

    /// Withdraws the place when nothing was published.
    func finish() {
        guard let ticket, !done else { return }
        done = true
        feed.withdraw(ticket)
    }
}
