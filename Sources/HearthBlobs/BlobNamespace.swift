/// A service's own set of blob tables: the bytes of one service never share rows with another's,
/// so one service's reset or start-up sweep cannot touch another service's objects.
public protocol BlobNamespace: Sendable {
    /// The namespace's table names.
    static var tables: BlobTables { get }
}

/// The three tables of a blob namespace, `<prefix>_blobs`, `<prefix>_chunks`, `<prefix>_blob_chunks`.
public struct BlobTables: Sendable, Equatable {
    /// One row per blob: its size, whether it is still being written, when it was created.
    public let blobs: String
    /// Body bytes, one row of at most `BlobWriter.chunkSize` bytes each.
    public let chunks: String
    /// The ordered slices of chunks that make up each blob.
    public let blobChunks: String
    /// The prefix: also the name of the namespace's directory of chunk files (`ChunkFiles`).
    public let prefix: String

    /// The tables named after `prefix` (a fixed identifier, never user input: it is spliced into SQL).
    public init(prefix: String) {
        blobs = "\(prefix)_blobs"
        chunks = "\(prefix)_chunks"
        blobChunks = "\(prefix)_blob_chunks"
        self.prefix = prefix
    }

    /// The statements that create the tables: for a service's migration. Blob bodies live in chunk
    /// rows; a blob is a list of slices of chunks, so concatenating or copying a blob only writes
    /// small mapping rows and never moves body bytes. A chunk is deleted when no slice refers to it.
    public var createStatements: String {
        """
        CREATE TABLE \(blobs) (
            id INTEGER PRIMARY KEY,
            size INTEGER NOT NULL DEFAULT 0,
            staging INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX \(blobs)_staging ON \(blobs)(staging) WHERE staging = 1;
        CREATE TABLE \(chunks) (
            id INTEGER PRIMARY KEY,
            data BLOB NOT NULL
        );
        CREATE TABLE \(blobChunks) (
            blob_id INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            length INTEGER NOT NULL,
            chunk_id INTEGER NOT NULL,
            chunk_start INTEGER NOT NULL,
            PRIMARY KEY (blob_id, offset)
        ) WITHOUT ROWID;
        CREATE INDEX \(blobChunks)_chunk ON \(blobChunks)(chunk_id);
        """
    }

    /// The statement that gives the blob rows their `data` column: a small blob's bytes, stored in
    /// its own row with no chunk or slice rows (`BlobStore.inlineLimit`), for a service's migration
    /// after the one that ran `createStatements`. NULL for a blob whose bytes are chunk rows.
    public var inlineDataStatement: String {
        "ALTER TABLE \(blobs) ADD COLUMN data BLOB;"
    }

    /// The statement that gives the chunk rows their `file` column, for a service's migration after
    /// `inlineDataStatement`: non-NULL when the chunk's bytes are in the file of that number under
    /// `<data-dir>/blobs/<prefix>/` (`ChunkFiles`; its `data` is then empty). Rows written before it
    /// keep their bytes in `data` and read as before.
    public var chunkFileStatement: String {
        "ALTER TABLE \(chunks) ADD COLUMN file INTEGER;"
    }
}
