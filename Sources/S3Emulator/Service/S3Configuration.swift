/// Settings of the S3 endpoint.
public struct S3Configuration: Sendable {
    /// One access key pair.
    public struct Credential: Sendable, Equatable {
        public var accessKey: String
        public var secretKey: String
        /// The buckets this key may use; nil allows every bucket. A key limited this way acts as a
        /// user of the first key's account; every unlimited key is an account of its own.
        public var allowedBuckets: Set<String>?
        /// The account's canonical user id (`Owner/ID`, ACL grantees); nil derives one from the key.
        public var canonicalID: String?
        /// The account's display name (`Owner/DisplayName`); nil uses the access key.
        public var displayName: String?
        /// The account's 12-digit id (policy principals `arn:aws:iam::<id>:root`); nil derives one
        /// (the first key's account is `000000000000`).
        public var accountID: String?

        public init(accessKey: String, secretKey: String, allowedBuckets: Set<String>? = nil,
                    canonicalID: String? = nil, displayName: String? = nil, accountID: String? = nil) {
            self.accessKey = accessKey
            self.secretKey = secretKey
            self.allowedBuckets = allowedBuckets
            self.canonicalID = canonicalID
            self.displayName = displayName
            self.accountID = accountID
        }
    }

    /// A KMS key of the local key ring, created at start when missing (`s3KmsKeys`).
    public struct KMSKey: Sendable, Equatable {
        /// The key id (a UUID when nil; any id without `/` or `:` is accepted, as s3-tests' `testkey-1`).
        public var keyID: String?
        /// `alias/…`.
        public var alias: String?
        /// The access key whose account owns it (nil: the first key's).
        public var accessKey: String?

        public init(keyID: String?, alias: String? = nil, accessKey: String? = nil) {
            self.keyID = keyID
            self.alias = alias
            self.accessKey = accessKey
        }
    }

    /// The region every bucket lives in and every signature must name.
    public var region: String
    /// Accepted key pairs; the first one owns buckets created at start.
    public var credentials: [Credential]
    /// Validate SigV2 signatures instead of rejecting them as S3 does for new buckets.
    public var allowSigV2: Bool
    /// Where clients reach the S3 listener (`http://127.0.0.1:9000`); presigned URLs start with it.
    /// nil until known: `S3Service.setPublicBaseURL(_:)` sets it once the port is bound.
    public var publicBaseURL: String?
    /// Host names that mean "this endpoint"; `<bucket>.<name>` selects a bucket (virtual-hosted style).
    public var endpointHosts: [String]
    /// Whether the listener serves HTTPS (for URLs it builds when no base URL is set).
    public var isTLS: Bool
    /// Buckets created at start (and again after a reset).
    public var defaultBuckets: [String]
    /// How many recent requests `GET /emulator/v1/s3/requests` can show.
    public var requestLogCapacity: Int
    /// Largest single PUT (S3: 5 GiB).
    public var maxObjectSize: Int64
    /// Origins (`*`, or with one `*` wildcard) that every bucket without a CORS configuration of its
    /// own allows, with any method and header — a local web-development convenience
    /// (`--s3-cors-origins`). Empty, the default, is S3's behaviour: no configuration, no CORS.
    public var corsOrigins: [String]
    /// Accept SSE-C keys over plain HTTP (S3 refuses them; `--s3-allow-ssec-http`).
    public var allowSSECOverHTTP: Bool
    /// KMS keys to have in the key ring.
    public var kmsKeys: [KMSKey]
    /// How long RestoreObject takes (`--s3-restore-time`; default at once).
    public var restoreTiming: RestoreTiming

    /// The configuration `hearth start` uses unless told otherwise: us-east-1, the `test`/`test` key.
    public init(region: String = "us-east-1",
                credentials: [Credential] = [Credential(accessKey: "test", secretKey: "test")],
                allowSigV2: Bool = false,
                publicBaseURL: String? = nil,
                endpointHosts: [String] = ["localhost", "s3.localhost", "localhost.localstack.cloud", "s3.localhost.localstack.cloud", "127.0.0.1.nip.io"],
                isTLS: Bool = false,
                defaultBuckets: [String] = [],
                requestLogCapacity: Int = 500,
                maxObjectSize: Int64 = 5 << 30,
                corsOrigins: [String] = [],
                allowSSECOverHTTP: Bool = false,
                kmsKeys: [KMSKey] = [],
                restoreTiming: RestoreTiming = .instant) {
        self.region = region
        self.credentials = credentials
        self.allowSigV2 = allowSigV2
        self.publicBaseURL = publicBaseURL
        self.endpointHosts = endpointHosts
        self.isTLS = isTLS
        self.defaultBuckets = defaultBuckets
        self.requestLogCapacity = requestLogCapacity
        self.maxObjectSize = maxObjectSize
        self.corsOrigins = corsOrigins
        self.allowSSECOverHTTP = allowSSECOverHTTP
        self.kmsKeys = kmsKeys
        self.restoreTiming = restoreTiming
    }
}
