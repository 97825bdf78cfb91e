import Foundation
import HearthCore
import SecurityRules

/// Collects what one write transaction changes and publishes it to the change feed once the
/// transaction has committed (or withdraws its place when it rolled back). It reports the same
/// documents to the read cache (`DocumentCache.Write`), which keeps the versions stored rather
/// than forgetting every entry at each commit.
///
/// Used as: make one before `write`, `begin` inside the body once the commit time is taken (on the
/// writer, so places follow commit order), `record` each stored change, `publish` after `write`
/// returned (before the caller is answered: the cache is brought up to date there), and `finish`
/// in a `defer` (withdraws a place taken by a body that failed). Its `write` must then be a
/// `recorded` one (`FirestoreStorage.write`), or the cache is emptied after it anyway.
final class ChangeRecorder: @unchecked Sendable {
    // Touched only by the calling thread and the writer body it waits on, never concurrently.
    private let feed: ChangeFeed
    private let database: DatabaseID
    private let cache: DocumentCache
    private var cached: DocumentCache.Write?
    private var ticket: ChangeFeed.Ticket?
    private var commitTime = Instant(unixMicros: 0)
    private var space: Int64 = 0
    private var documents: [CommittedChange.Document] = []
    private var done = false

    init(feed: ChangeFeed, database: DatabaseID, cache: DocumentCache) {
        self.feed = feed
        self.database = database
        self.cache = cache
    }

    /// Takes this commit's place in commit order (call on the writer, after `nextCommitTime`);
    /// `space` is the one the transaction writes.
    func begin(at commitTime: Instant, space: Int64) {
        ticket = feed.reserve()
        cached = cache.beginWrite(database)
        self.commitTime = commitTime
        self.space = space
    }

    /// The body is about to write `path` (after `begin`, before checking the write): the read
    /// cache marks it (`DocumentCache.Write.writing`) and returns its served entry, if any.
    func writing(_ path: ResourcePath, name: String?) -> (entry: DocumentCache.Entry?, mark: Int?) {
        cached?.writing(path, name: name) ?? (nil, nil)
    }

    /// Notes one stored change. `mark`, `name` and `resource`: what `writing` returned for it, the
    /// document's name, `after` as the rules see it, when the caller has them (the read cache keeps them).
    func record(_ path: ResourcePath, before: StoredDocument?, after: StoredDocument?, mark: Int? = nil, name: String? = nil,
                resource: RulesValue? = nil) {
        documents.append(CommittedChange.Document(path: path, before: before, after: after))
        cached?.record(path, mark: mark, name: name, after: after, resource: resource)
    }

    /// A statement that stores a change failed half-way and the transaction goes on: the read
    /// cache cannot know what was left (`DocumentCache.Write.storedUnknown`).
    func storedUnknown() {
        cached?.storedUnknown()
    }

    /// Publishes the committed changes (the transaction's COMMIT succeeded).
    func publish() {
        cached?.apply()
        guard let ticket, !done else { return }
        done = true
        feed.publish(ticket, CommittedChange(database: database, commitTime: commitTime, kind: .documents(documents, space: space)))
    }

    /// Withdraws the place when nothing was published.
    func finish() {
        cached?.abandon()  // nothing when it was applied
        guard let ticket, !done else { return }
        done = true
        feed.withdraw(ticket)
    }
}
