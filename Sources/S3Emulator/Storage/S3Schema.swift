import HearthSQLite

/// The S3 tables (all prefixed `s3_`).
///
/// Object bodies live in `s3_chunks` rows of at most `BlobWriter.chunkSize` bytes, or, when small,
/// in their `s3_blobs` row's `data` (`BlobStore.inlineLimit`). A blob (the
/// body of one object or one multipart part) is an ordered list of slices of chunks in
/// `s3_blob_chunks`, so completing a multipart upload, copying an object or copying a part range
/// only writes small mapping rows and never moves body bytes. A chunk is deleted when no mapping
/// row refers to it any more.
enum S3Schema {
    static let migrations: [Migration] = [
        Migration("s3.1", """
        CREATE TABLE s3_buckets (
            name TEXT PRIMARY KEY,
            region TEXT NOT NULL,
            owner TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE s3_blobs (
            id INTEGER PRIMARY KEY,
            size INTEGER NOT NULL DEFAULT 0,
            staging INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX s3_blobs_staging ON s3_blobs(staging) WHERE staging = 1;
        CREATE TABLE s3_chunks (
            id INTEGER PRIMARY KEY,
            data BLOB NOT NULL
        );
        CREATE TABLE s3_blob_chunks (
            blob_id INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            length INTEGER NOT NULL,
            chunk_id INTEGER NOT NULL,
            chunk_start INTEGER NOT NULL,
            PRIMARY KEY (blob_id, offset)
        ) WITHOUT ROWID;
        CREATE INDEX s3_blob_chunks_chunk ON s3_blob_chunks(chunk_id);
        CREATE TABLE s3_objects (
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            blob_id INTEGER NOT NULL,
            size INTEGER NOT NULL,
            etag TEXT NOT NULL,
            last_modified INTEGER NOT NULL,
            content_type TEXT,
            content_disposition TEXT,
            content_encoding TEXT,
            content_language TEXT,
            cache_control TEXT,
            expires TEXT,
            user_metadata TEXT NOT NULL DEFAULT '[]',
            storage_class TEXT,
            website_redirect TEXT,
            tagging TEXT,
            checksum_algorithm TEXT,
            checksum_value TEXT,
            checksum_type TEXT,
            part_sizes TEXT,
            owner TEXT NOT NULL,
            PRIMARY KEY (bucket, key)
        ) WITHOUT ROWID;
        CREATE TABLE s3_uploads (
            upload_id TEXT PRIMARY KEY,
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            initiated INTEGER NOT NULL,
            owner TEXT NOT NULL,
            metadata TEXT NOT NULL,
            checksum_algorithm TEXT,
            checksum_type TEXT
        );
        CREATE INDEX s3_uploads_by_key ON s3_uploads(bucket, key, initiated);
        CREATE TABLE s3_parts (
            upload_id TEXT NOT NULL,
            part_number INTEGER NOT NULL,
            blob_id INTEGER NOT NULL,
            size INTEGER NOT NULL,
            etag TEXT NOT NULL,
            last_modified INTEGER NOT NULL,
            checksum_value TEXT,
            PRIMARY KEY (upload_id, part_number)
        ) WITHOUT ROWID;
        """),
        // Bucket CORS configurations; a bucket's row goes with the bucket (DeleteBucket, reset).
        Migration("s3.2", """
        CREATE TABLE s3_bucket_cors (
            bucket TEXT PRIMARY KEY,
            rules TEXT NOT NULL,
            updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER s3_bucket_cors_follow_bucket AFTER DELETE ON s3_buckets BEGIN
            DELETE FROM s3_bucket_cors WHERE bucket = OLD.name;
        END;
        """),
        // Bucket configurations (policy, lifecycle, encryption, public access block, ownership
        // controls, tags) and versioning. `s3_buckets.versioning` is NULL for a bucket that never
        // had versioning, so the unversioned write path reads it with the bucket row it already
        // reads. `s3_objects` keeps each key's current version (`version_id` NULL: the null
        // version); every older version and every delete marker lives in `s3_object_versions`,
        // ordered within its key by `seq`, ascending from the newest (each new entry takes the
        // smallest seq minus one), so listings and "the newest remaining version" are index scans.
        Migration("s3.3", """
        ALTER TABLE s3_buckets ADD COLUMN versioning TEXT;
        ALTER TABLE s3_objects ADD COLUMN version_id TEXT;
        CREATE TABLE s3_bucket_config (
            bucket TEXT NOT NULL,
            kind TEXT NOT NULL,
            document TEXT,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (bucket, kind)
        ) WITHOUT ROWID;
        CREATE TRIGGER s3_bucket_config_follow_bucket AFTER DELETE ON s3_buckets BEGIN
            DELETE FROM s3_bucket_config WHERE bucket = OLD.name;
        END;
        CREATE TABLE s3_object_versions (
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            version_id TEXT NOT NULL,
            delete_marker INTEGER NOT NULL DEFAULT 0,
            blob_id INTEGER,
            size INTEGER NOT NULL DEFAULT 0,
            etag TEXT NOT NULL DEFAULT '',
            last_modified INTEGER NOT NULL,
            content_type TEXT,
            content_disposition TEXT,
            content_encoding TEXT,
            content_language TEXT,
            cache_control TEXT,
            expires TEXT,
            user_metadata TEXT NOT NULL DEFAULT '[]',
            storage_class TEXT,
            website_redirect TEXT,
            tagging TEXT,
            checksum_algorithm TEXT,
            checksum_value TEXT,
            checksum_type TEXT,
            part_sizes TEXT,
            owner TEXT NOT NULL,
            PRIMARY KEY (bucket, key, seq)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX s3_object_versions_by_id ON s3_object_versions(bucket, key, version_id);
        """),
        // Per-object settings beyond the stored headers (ACL, object lock, encryption) as JSON;
        // completed multipart uploads, so a retried CompleteMultipartUpload answers as the first
        // did; and the positions of versions deleted for good, so a listing can continue after a
        // version-id marker whose version is gone. A current version that was promoted (the
        // newer ones were deleted) keeps its `seq` in `s3_objects.seq`, so its place in a
        // version listing does not move.
        Migration("s3.4", """
        ALTER TABLE s3_objects ADD COLUMN extra TEXT;
        ALTER TABLE s3_objects ADD COLUMN seq INTEGER;
        ALTER TABLE s3_object_versions ADD COLUMN extra TEXT;
        CREATE TABLE s3_completed_uploads (
            upload_id TEXT PRIMARY KEY,
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            etag TEXT NOT NULL,
            version_id TEXT,
            checksum TEXT,
            completed_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE s3_gone_versions (
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            version_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (bucket, key, version_id)
        ) WITHOUT ROWID;
        CREATE TRIGGER s3_completed_uploads_follow_bucket AFTER DELETE ON s3_buckets BEGIN
            DELETE FROM s3_completed_uploads WHERE bucket = OLD.name;
            DELETE FROM s3_gone_versions WHERE bucket = OLD.name;
        END;
        """),
        // The local KMS key ring (issue 18): keys per account, with the material that wraps the
        // data keys of SSE-KMS objects; `account` '' holds the SSE-S3 master key. The ring is
        // KMS's, not S3's: a reset of S3 keeps it.
        Migration("s3.5", """
        CREATE TABLE s3_kms_keys (
            key_id TEXT PRIMARY KEY,
            account TEXT NOT NULL,
            alias TEXT,
            description TEXT,
            material BLOB NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX s3_kms_keys_alias ON s3_kms_keys(account, alias) WHERE alias IS NOT NULL;
        """),
        // Small bodies in their blob's own row (`BlobStore.inlineLimit`): overwriting a 4 KiB
        // object then changes one blob row rather than a blob, a chunk and a slice row and its index.
        Migration("s3.6", S3BlobNamespace.tables.inlineDataStatement),
        // Full chunks' bytes in files of their own (`<data-dir>/blobs/s3/`), written once instead
        // of twice through the WAL; older rows keep theirs in `data`.
        Migration("s3.7", S3BlobNamespace.tables.chunkFileStatement),
    ]
}
