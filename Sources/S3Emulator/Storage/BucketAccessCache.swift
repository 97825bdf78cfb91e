import HearthSQLite

/// Buckets' access settings as last read, labelled with the database's write generation
/// (`GenerationCache`: any write empties it). Absent buckets are cached too (as nil).
typealias BucketAccessCache = GenerationCache<String, S3Store.BucketAccess?>
