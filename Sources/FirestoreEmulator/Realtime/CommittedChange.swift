import HearthCore

/// What one COMMIT did to one database, as the change feed publishes it.
struct CommittedChange: Sendable {
    /// One document the commit wrote or deleted.
    struct Document: Sendable {
        var path: ResourcePath
        /// Nil: the document did not exist before the commit.
        var before: StoredDocument?
        /// Nil: the commit deleted it.
        var after: StoredDocument?
    }

    /// What was committed.
    enum Kind: Sendable {
        /// Documents written at `commitTime` into storage space `space`. A clear can be published
        /// before a commit that reached SQLite ahead of it; listeners skip changes to a space the
        /// database no longer uses.
        case documents([Document], space: Int64)
        /// Every document of the database is gone (the emulator's clear); nil database: every
        /// database (reset). Listeners re-read their targets from scratch.
        case cleared
    }

    /// Nil only for `cleared` of every database.
    var database: DatabaseID?
    var commitTime: Instant
    var kind: Kind
}
