import HearthBlobs
import HearthSQLite

/// The Cloud Storage tables (all prefixed `storage_`).
///
/// Object bytes live in the Storage namespace of `HearthBlobs` (`storage_blobs`, `storage_chunks`,
/// `storage_blob_chunks`): the same code as S3's bodies, in tables of their own, so resetting one
/// service never touches the other's objects. An object row keeps only its live generation.
/// A resumable upload is a row in `storage_uploads` plus one final blob per acknowledged chunk
/// (`storage_upload_pieces`); finalizing concatenates the pieces' slices without moving bytes and
/// keeps the session row with the generation it made, so a client whose final response was lost
/// learns the outcome by asking again.
enum StorageSchema {
    static let migrations: [Migration] = [
        Migration("storage.1", StorageBlobNamespace.tables.createStatements + """

        CREATE TABLE storage_buckets (
            name TEXT PRIMARY KEY,
            created_at INTEGER NOT NULL,
            metageneration INTEGER NOT NULL DEFAULT 1
        ) WITHOUT ROWID;
        CREATE TABLE storage_objects (
            bucket TEXT NOT NULL,
            name TEXT NOT NULL,
            generation INTEGER NOT NULL,
            metageneration INTEGER NOT NULL,
            blob_id INTEGER NOT NULL,
            size INTEGER NOT NULL,
            md5 BLOB NOT NULL,
            crc32c INTEGER NOT NULL,
            content_type TEXT,
            content_encoding TEXT,
            content_disposition TEXT,
            content_language TEXT,
            cache_control TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            time_created INTEGER NOT NULL,
            updated INTEGER NOT NULL,
            PRIMARY KEY (bucket, name)
        ) WITHOUT ROWID;
        CREATE TABLE storage_uploads (
            id TEXT PRIMARY KEY,
            bucket TEXT NOT NULL,
            name TEXT NOT NULL,
            api TEXT NOT NULL,
            resource TEXT NOT NULL,
            declared_size INTEGER,
            received INTEGER NOT NULL DEFAULT 0,
            conditions TEXT NOT NULL DEFAULT '{}',
            created_at INTEGER NOT NULL,
            final_generation INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE storage_upload_pieces (
            upload_id TEXT NOT NULL,
            offset INTEGER NOT NULL,
            blob_id INTEGER NOT NULL,
            size INTEGER NOT NULL,
            PRIMARY KEY (upload_id, offset)
        ) WITHOUT ROWID;
        """),
        // Small bodies in their blob's own row (`BlobStore.inlineLimit`), as S3's.
        Migration("storage.2", StorageBlobNamespace.tables.inlineDataStatement),
        // Full chunks in files (`<data-dir>/blobs/storage/`), as S3's.
        Migration("storage.3", StorageBlobNamespace.tables.chunkFileStatement),
        // GCS's `customTime`, in microseconds (NULL: never set), and a composite object's
        // `componentCount` (NULL: not composite).
        Migration("storage.4", """
        ALTER TABLE storage_objects ADD COLUMN custom_time INTEGER;
        ALTER TABLE storage_objects ADD COLUMN component_count INTEGER;
        """),
        // Access control: an object's legacy ACL, a bucket's ACL, default object ACL and IAM
        // policy (JSON; NULL: the default, `projectPrivate`), its writable configuration
        // (`labels`, `cors`, `lifecycle`, `versioning`, `iamConfiguration`, … as a JSON object)
        // and the time of its last change.
        Migration("storage.5", """
        ALTER TABLE storage_objects ADD COLUMN acl TEXT;
        ALTER TABLE storage_buckets ADD COLUMN acl TEXT;
        ALTER TABLE storage_buckets ADD COLUMN default_object_acl TEXT;
        ALTER TABLE storage_buckets ADD COLUMN iam_policy TEXT;
        ALTER TABLE storage_buckets ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
        ALTER TABLE storage_buckets ADD COLUMN updated_at INTEGER;
        """),
    ]
}
