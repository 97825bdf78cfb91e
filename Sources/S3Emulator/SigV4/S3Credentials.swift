/// The access keys the S3 endpoint accepts, each with its secret and optionally the only buckets it
/// may use.
public struct S3Credentials: Sendable {
    /// One access key pair.
    public struct Key: Sendable, Equatable {
        /// The access key id (`AKIA…`, or `test` by default).
        public let accessKey: String
        /// The secret access key.
        public let secret: String
        /// The buckets this key may use; nil allows every bucket.
        public let allowedBuckets: Set<String>?

        public init(accessKey: String, secret: String, allowedBuckets: Set<String>? = nil) {
            self.accessKey = accessKey
            self.secret = secret
            self.allowedBuckets = allowedBuckets
        }

        /// Whether this key may use `bucket` (nil: a request not about one bucket, like ListBuckets).
        public func allows(bucket: String?) -> Bool {
            guard let bucket, let allowed = allowedBuckets else { return true }
            return allowed.contains(bucket)
        }
    }

    /// Every key, in configuration order (the diagnosis tries them in this order).
    public let keys: [Key]
    private let byAccessKey: [String: Key]

    /// Credentials from `keys`; a later duplicate access key replaces an earlier one.
    public init(_ keys: [Key]) {
        var map: [String: Key] = [:]
        var ordered: [Key] = []
        for key in keys {
            if map[key.accessKey] != nil { ordered.removeAll { $0.accessKey == key.accessKey } }
            map[key.accessKey] = key
            ordered.append(key)
        }
        self.keys = ordered
        self.byAccessKey = map
    }

    /// A single unrestricted pair.
    public init(accessKey: String, secret: String) {
        self.init([Key(accessKey: accessKey, secret: secret)])
    }

    /// The key with this access key id.
    public func key(_ accessKey: String) -> Key? { byAccessKey[accessKey] }

    /// The secret of `accessKey`, nil when unknown.
    public func secret(for accessKey: String) -> String? { byAccessKey[accessKey]?.secret }

    /// Whether `accessKey` may use `bucket` (nil: a request not about one bucket, like ListBuckets).
    public func allows(accessKey: String, bucket: String?) -> Bool {
        byAccessKey[accessKey]?.allows(bucket: bucket) ?? false
    }
}
