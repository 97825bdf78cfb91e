import Foundation
import HearthCore
import HearthHTTP
import S3Emulator

/// Every setting of `hearth start`, from defaults, `firebase.json`, `--config FILE` and flags (later wins).
struct StartOptions: Sendable {
    var host = "127.0.0.1"
    /// The address generated URLs, the ready file and the printed exports name (nil: derived from `host`).
    var publicHost: String?
    var project = "demo-hearth"
    var dataDir = "emulator-data"
    var inMemory = false
    /// `--rules` as given (nil: not given); `rulesChoice` is what it resolves to.
    var rules: String?
    var rulesChoice = RulesChoice.shipped
    var authPort = 9099
    var firestorePort = 8080
    var s3Port = 9000
    var storagePort = 9199
    /// `--storage-rules` as given (nil: not given); `storageRulesChoice` is what it resolves to.
    var storageRules: String?
    var storageRulesChoice = RulesChoice.shipped
    var apiPort = 8000
    var hubPort = 4400
    /// The web UI's port (`--ui-port`).
    var uiPort = 4000
    /// Entries the request log keeps (`--request-log`).
    var requestLogSize = 20_000
    var s3AccessKey = "test"
    var s3SecretKey = "test"
    var s3Region = "us-east-1"
    /// Extra S3 credentials: access key, secret, optional bucket allowlist, optional account identity.
    var s3Credentials: [S3CredentialOption] = []
    var s3AllowSigV2 = false
    var s3AllowSSECOverHTTP = false
    /// `s3KmsKeys` of the config file: the key ring's keys.
    var s3KmsKeys: [S3KMSKeyOption] = []
    /// Origins buckets without a CORS configuration allow (empty: none, as S3).
    var s3CorsOrigins: [String] = []
    /// `--s3-restore-time`: how long RestoreObject takes.
    var s3RestoreTiming = RestoreTiming.instant
    var tlsCert: String?
    var tlsKey: String?
    var tokenSigning = "none"
    var uploadsBucket = "uploads"
    var uploadsMaxExpires = 3600
    var uploadsContentTypes: [String]? = nil
    var requireAppCheck = false
    var seed: UInt64?
    var clock: Instant?
    var logFormat = Logger.Format.text
    var quiet = false
    var exitWithParent = false
    var readyFile: String?
    /// `--import DIR`: seed data loaded at start (a `hearth export` directory).
    var importDir: String?
    /// `--export-on-exit DIR`: every service's data written there at shutdown.
    var exportOnExit: String?
    var threads = 16
    /// `--firestore-threads N`: the Firestore listener's HTTP/1.1 workers. Its REST commits are parked
    /// while their batch commits (they hold no worker), so it needs fewer than the other listeners,
    /// and each worker woken then serves every connection of its own that has a request or an answer.
    var firestoreThreads = 4
    /// `--http2-busy-poll-us N`: how long an HTTP/2 loop may poll before it sleeps (`BusyPoll`).
    var http2BusyPollMicroseconds = BusyPoll.defaultCeilingMicroseconds
    /// `--http1-busy-poll-us N`: how long a Firestore HTTP/1.1 worker may poll before it sleeps (`WorkerPoll`).
    var http1BusyPollMicroseconds = BusyPoll.defaultCeilingMicroseconds

    /// The flags, their value names and help, in the order `--help` lists them.
    static let flags: [(name: String, value: String?, help: String)] = [
        ("--config", "FILE", "JSON file with any of these settings (keys as the flag names without dashes, camelCase also accepted)"),
        ("--host", "ADDR", "address every listener binds to (default 127.0.0.1)"),
        ("--public-host", "HOST", "address clients reach hearth at (e.g. this machine's LAN IP for a phone): every generated URL, presigned signature, the ready file and the exports use it (default: --host, or 127.0.0.1 for 0.0.0.0)"),
        ("--project", "ID", "default Firebase project id (default demo-hearth)"),
        ("--data-dir", "DIR", "where hearth.sqlite and firestore.sqlite live (default emulator-data)"),
        ("--in-memory", nil, "keep everything in memory; write no files"),
        ("--rules", "FILE|open", "Firestore security rules, reloaded when the file changes (default rules/firestore.rules in the working directory, else the shipped rules built into hearth; a missing FILE is an error; open = allow every request)"),
        ("--auth-port", "N", "Firebase Auth emulator port (default 9099; 0 = any free port)"),
        ("--firestore-port", "N", "Firestore emulator port (default 8080)"),
        ("--s3-port", "N", "S3 endpoint port (default 9000)"),
        ("--storage-port", "N", "Cloud Storage for Firebase emulator port (default 9199)"),
        ("--storage-rules", "FILE", "Cloud Storage security rules, reloaded when the file changes (default rules/storage.rules in the working directory, else the shipped rules built into hearth; a missing FILE is an error; never open)"),
        ("--api-port", "N", "uploads API port (default 8000)"),
        ("--hub-port", "N", "hub/admin port (default 4400)"),
        ("--ui-port", "N", "web UI port (default 4000)"),
        ("--request-log", "N", "requests the log keeps for the UI and GET /emulator/v1/requests (default 20000)"),
        ("--s3-access-key", "KEY", "S3 access key id (default test)"),
        ("--s3-secret-key", "SECRET", "S3 secret access key (default test)"),
        ("--s3-region", "REGION", "S3 region (default us-east-1)"),
        ("--s3-allow-sigv2", nil, "validate SigV2 signatures instead of rejecting them as S3 does for new buckets"),
        ("--s3-allow-ssec-http", nil, "accept SSE-C customer keys over plain HTTP (S3 requires HTTPS for them)"),
        ("--s3-cors-origins", "LIST", "comma-separated origins (or *) that buckets without their own CORS configuration allow, for local web development (default none, as S3)"),
        ("--s3-restore-time", "instant|aws|SECONDS", "how long RestoreObject of a GLACIER/DEEP_ARCHIVE object takes on the emulator clock: instant (default), aws (the upper end of S3's documented time for the class and tier), or a number of seconds"),
        ("--tls-cert", "PEM", "serve HTTPS on the S3 port with this certificate (see `hearth cert`)"),
        ("--tls-key", "PEM", "private key for --tls-cert"),
        ("--token-signing", "none|rs256", "ID token signing: none (Firebase emulator parity, default) or rs256 (verifiable signatures)"),
        ("--uploads-bucket", "NAME", "bucket the uploads API presigns for (default uploads; created at start)"),
        ("--uploads-content-types", "LIST", "comma-separated media types the uploads API presigns (default images, PDF, video/mp4, application/octet-stream)"),
        ("--uploads-max-expires", "SECONDS", "longest presigned URL lifetime the uploads API grants (default 3600)"),
        ("--require-app-check", nil, "uploads API requires an X-Firebase-AppCheck token"),
        ("--seed", "N", "make generated ids reproducible"),
        ("--clock", "RFC3339", "start with the clock frozen at this instant"),
        ("--log-format", "text|json", "request log format (default text)"),
        ("--quiet", nil, "log only warnings and errors"),
        ("--ready-file", "PATH", "where to write the ready JSON (default <data-dir>/hearth.ready.json)"),
        ("--import", "DIR", "load seed data from a hearth export directory at start (see hearth export)"),
        ("--export-on-exit", "DIR", "write every service's data to DIR (JSON) when hearth stops"),
        ("--threads", "N", "HTTP worker threads per listener but Firestore's (default 16)"),
        ("--firestore-threads", "N", "HTTP/1.1 worker threads of the Firestore listener, whose REST commits hold none while they wait for their batch (default 4)"),
        ("--http2-busy-poll-us", "N", "longest time an HTTP/2 (gRPC) loop polls for a client's next request before it sleeps, adapted to the traffic; 0 = never poll (default \(BusyPoll.defaultCeilingMicroseconds), at most \(BusyPoll.maximumCeilingMicroseconds))"),
        ("--http1-busy-poll-us", "N", "longest time a Firestore HTTP/1.1 (REST) worker polls an answered connection for its next request before it sleeps, adapted to the traffic as --http2-busy-poll-us; 0 = never poll (default \(BusyPoll.defaultCeilingMicroseconds), at most \(BusyPoll.maximumCeilingMicroseconds))"),
        ("--exit-with-parent", nil, "shut down (gracefully) when the process that started hearth exits"),
    ]

    /// A usage error: says what is wrong; the process exits 2.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Applies `firebase.json` from `directory` (ports and rules path), if present.
    mutating func applyFirebaseJSON(in directory: String) throws {
        let path = (directory as NSString).appendingPathComponent("firebase.json")
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let json: JSON
        do { json = try JSON.parse(data) } catch { throw UsageError(description: "firebase.json: \(error)") }
        if let p = json["emulators"]?["auth"]?["port"]?.intValue { authPort = Int(p) }
        if let p = json["emulators"]?["firestore"]?["port"]?.intValue { firestorePort = Int(p) }
        if let p = json["emulators"]?["hub"]?["port"]?.intValue { hubPort = Int(p) }
        if let p = json["emulators"]?["ui"]?["port"]?.intValue { uiPort = Int(p) }
        if let p = json["emulators"]?["storage"]?["port"]?.intValue { storagePort = Int(p) }
        // `storage` is an object, or an array of deploy targets (the emulator uses the first).
        if let r = (json["storage"]?["rules"] ?? json["storage"]?[0]?["rules"])?.stringValue { storageRules = r }
        if let h = json["emulators"]?["auth"]?["host"]?.stringValue { host = h }
        if let r = json["firestore"]?["rules"]?.stringValue { rules = r }
    }

    /// Applies a `--config` JSON file.
    mutating func applyConfigFile(_ path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError(description: "cannot read config file \(path)")
        }
        let json: JSON
        do { json = try JSON.parse(data) } catch { throw UsageError(description: "config file \(path): \(error)") }
        guard let object = json.objectValue else { throw UsageError(description: "config file \(path): expected a JSON object") }
        for (key, value) in object {
            let flag = "--" + StartOptions.kebab(key)
            if flag == "--config" { continue }
            if flag == "--s3-credentials" {
                try applyCredentials(value, source: path)
                continue
            }
            if flag == "--s3-kms-keys" {
                try applyKMSKeys(value, source: path)
                continue
            }
            guard let spec = StartOptions.flags.first(where: { $0.name == flag }) else {
                throw UsageError(description: "config file \(path): unknown setting '\(key)'")
            }
            if spec.value == nil {
                guard let b = value.boolValue else { throw UsageError(description: "config file \(path): '\(key)' must be true or false") }
                if b { try apply(flag: flag, value: nil) }
            } else {
                let text: String
                switch value {
                case .string(let s): text = s
                case .int(let i): text = String(i)
                case .double(let d): text = String(d)
                case .bool(let b): text = String(b)
                default: throw UsageError(description: "config file \(path): '\(key)' must be a string or number")
                }
                try apply(flag: flag, value: text)
            }
        }
    }

    private mutating func applyCredentials(_ value: JSON, source: String) throws {
        guard let list = value.arrayValue else { throw UsageError(description: "\(source): s3Credentials must be an array") }
        for item in list {
            guard let key = item["accessKey"]?.stringValue, let secret = item["secretKey"]?.stringValue else {
                throw UsageError(description: "\(source): each s3Credentials entry needs accessKey and secretKey")
            }
            let buckets = item["buckets"]?.arrayValue?.compactMap(\.stringValue)
            s3Credentials.append(S3CredentialOption(accessKey: key, secret: secret, buckets: buckets,
                                                    canonicalID: item["canonicalId"]?.stringValue,
                                                    displayName: item["displayName"]?.stringValue,
                                                    accountID: item["accountId"]?.stringValue))
        }
    }

    private mutating func applyKMSKeys(_ value: JSON, source: String) throws {
        guard let list = value.arrayValue else { throw UsageError(description: "\(source): s3KmsKeys must be an array") }
        for item in list {
            guard item.objectValue != nil else { throw UsageError(description: "\(source): each s3KmsKeys entry must be an object") }
            s3KmsKeys.append(S3KMSKeyOption(keyID: item["keyId"]?.stringValue, alias: item["alias"]?.stringValue,
                                            accessKey: item["accessKey"]?.stringValue))
        }
    }

    /// `s3AccessKey` → `s3-access-key`; already-kebab names pass through.
    static func kebab(_ key: String) -> String {
        var out = ""
        for c in key {
            if c.isUppercase {
                out += "-" + c.lowercased()
            } else {
                out.append(c)
            }
        }
        return out.replacingOccurrences(of: "s3", with: "s3")
    }

    /// Parses `hearth start` arguments over defaults, firebase.json and the config file.
    static func parse(_ arguments: [String], workingDirectory: String = FileManager.default.currentDirectoryPath) throws -> StartOptions {
        var options = StartOptions()
        try options.applyFirebaseJSON(in: workingDirectory)
        // The config file applies before other flags whatever its position, so flags win.
        if let i = arguments.firstIndex(of: "--config") {
            guard i + 1 < arguments.count else { throw UsageError(description: "--config needs a value (FILE)") }
            try options.applyConfigFile(arguments[i + 1])
        } else if let a = arguments.first(where: { $0.hasPrefix("--config=") }) {
            try options.applyConfigFile(String(a.dropFirst("--config=".count)))
        }
        var i = 0
        while i < arguments.count {
            var arg = arguments[i]
            var inlineValue: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                inlineValue = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            guard let spec = flags.first(where: { $0.name == arg }) else {
                throw UsageError(description: "unknown flag '\(arg)' (see hearth start --help)")
            }
            if spec.value == nil {
                if inlineValue != nil { throw UsageError(description: "\(arg) takes no value") }
                try options.apply(flag: arg, value: nil)
                i += 1
            } else {
                let value: String
                if let inlineValue {
                    value = inlineValue
                    i += 1
                } else {
                    guard i + 1 < arguments.count else { throw UsageError(description: "\(arg) needs a value (\(spec.value!))") }
                    value = arguments[i + 1]
                    i += 2
                }
                if arg != "--config" { try options.apply(flag: arg, value: value) }
            }
        }
        options.rulesChoice = try RulesChoice.resolve(options.rules, workingDirectory: workingDirectory)
        options.storageRulesChoice = try RulesChoice.resolveStorage(options.storageRules, workingDirectory: workingDirectory)
        return options
    }

    private static func port(_ flag: String, _ value: String) throws -> Int {
        guard let n = Int(value), (0...65535).contains(n) else { throw UsageError(description: "\(flag) must be a port number 0-65535, got '\(value)'") }
        return n
    }

    mutating func apply(flag: String, value: String?) throws {
        let v = value ?? ""
        switch flag {
        case "--host": host = v
        case "--public-host":
            guard !v.isEmpty, !v.contains("/"), !v.contains(" ") else {
                throw UsageError(description: "--public-host must be a host name or IP address like 192.168.1.20, got '\(v)'")
            }
            publicHost = v
        case "--project":
            guard !v.isEmpty, v.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw UsageError(description: "--project must be letters, digits and '-', got '\(v)'")
            }
            project = v
        case "--data-dir": dataDir = v
        case "--in-memory": inMemory = true
        case "--rules": rules = v
        case "--auth-port": authPort = try Self.port(flag, v)
        case "--firestore-port": firestorePort = try Self.port(flag, v)
        case "--s3-port": s3Port = try Self.port(flag, v)
        case "--storage-port": storagePort = try Self.port(flag, v)
        case "--storage-rules": storageRules = v
        case "--api-port": apiPort = try Self.port(flag, v)
        case "--hub-port": hubPort = try Self.port(flag, v)
        case "--ui-port": uiPort = try Self.port(flag, v)
        case "--request-log":
            guard let n = Int(v), (1...1_000_000).contains(n) else {
                throw UsageError(description: "--request-log must be a number of entries 1-1000000, got '\(v)'")
            }
            requestLogSize = n
        case "--s3-access-key": s3AccessKey = v
        case "--s3-secret-key": s3SecretKey = v
        case "--s3-region": s3Region = v
        case "--s3-allow-sigv2": s3AllowSigV2 = true
        case "--s3-allow-ssec-http": s3AllowSSECOverHTTP = true
        case "--s3-cors-origins":
            let origins = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !origins.isEmpty, origins.allSatisfy({ $0.filter { $0 == "*" }.count <= 1 }) else {
                throw UsageError(description: "--s3-cors-origins must be a comma-separated list of origins like http://localhost:3000 (or *), each with at most one *, got '\(v)'")
            }
            s3CorsOrigins = origins
        case "--s3-restore-time":
            guard let timing = RestoreTiming(flag: v) else {
                throw UsageError(description: "--s3-restore-time must be instant, aws or a number of seconds 0-2592000, got '\(v)'")
            }
            s3RestoreTiming = timing
        case "--tls-cert": tlsCert = v
        case "--tls-key": tlsKey = v
        case "--token-signing":
            guard v == "none" || v == "rs256" else { throw UsageError(description: "--token-signing must be none or rs256, got '\(v)'") }
            tokenSigning = v
        case "--uploads-bucket": uploadsBucket = v
        case "--uploads-content-types":
            let types = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !types.isEmpty, types.allSatisfy({ $0.contains("/") }) else {
                throw UsageError(description: "--uploads-content-types must be a comma-separated list of media types like image/png, got '\(v)'")
            }
            uploadsContentTypes = types
        case "--uploads-max-expires":
            guard let n = Int(v), (1...604_800).contains(n) else {
                throw UsageError(description: "--uploads-max-expires must be 1-604800 seconds, got '\(v)'")
            }
            uploadsMaxExpires = n
        case "--require-app-check": requireAppCheck = true
        case "--seed":
            guard let n = UInt64(v) else { throw UsageError(description: "--seed must be a non-negative integer, got '\(v)'") }
            seed = n
        case "--clock":
            guard let t = Instant(rfc3339: v) else { throw UsageError(description: "--clock must be an RFC 3339 instant like 2026-01-01T00:00:00Z, got '\(v)'") }
            clock = t
        case "--log-format":
            guard let f = Logger.Format(rawValue: v) else { throw UsageError(description: "--log-format must be text or json, got '\(v)'") }
            logFormat = f
        case "--quiet": quiet = true
        case "--exit-with-parent": exitWithParent = true
        case "--ready-file": readyFile = v
        case "--import": importDir = v
        case "--export-on-exit": exportOnExit = v
        case "--threads":
            guard let n = Int(v), (1...256).contains(n) else { throw UsageError(description: "--threads must be 1-256, got '\(v)'") }
            threads = n
        case "--firestore-threads":
            guard let n = Int(v), (1...256).contains(n) else { throw UsageError(description: "--firestore-threads must be 1-256, got '\(v)'") }
            firestoreThreads = n
        case "--http2-busy-poll-us":
            guard let n = Int(v), (0...BusyPoll.maximumCeilingMicroseconds).contains(n) else {
                throw UsageError(description: "--http2-busy-poll-us must be 0-\(BusyPoll.maximumCeilingMicroseconds), got '\(v)'")
            }
            http2BusyPollMicroseconds = n
        case "--http1-busy-poll-us":
            guard let n = Int(v), (0...BusyPoll.maximumCeilingMicroseconds).contains(n) else {
                throw UsageError(description: "--http1-busy-poll-us must be 0-\(BusyPoll.maximumCeilingMicroseconds), got '\(v)'")
            }
            http1BusyPollMicroseconds = n
        case "--config": break
        default: throw UsageError(description: "unknown flag '\(flag)'")
        }
    }

    /// The host clients are told to use: `--public-host`, else `--host` (the loopback address for
    /// the wildcard ones, which a client cannot connect to).
    var advertisedHost: String {
        if let publicHost { return publicHost }
        switch host {
        case "0.0.0.0": return "127.0.0.1"
        case "::": return "::1"
        default: return host
        }
    }

    /// `advertisedHost` as it goes into a URL (IPv6 in brackets).
    var advertisedURLHost: String { advertisedHost.contains(":") ? "[\(advertisedHost)]" : advertisedHost }

    /// All S3 credentials: the default pair first.
    var allS3Credentials: [S3CredentialOption] {
        // A config entry for the default key may give its account identity.
        var first = s3Credentials.first { $0.accessKey == s3AccessKey } ?? S3CredentialOption(accessKey: s3AccessKey, secret: s3SecretKey)
        first.secret = s3SecretKey
        first.buckets = nil
        return [first] + s3Credentials.filter { $0.accessKey != s3AccessKey }
    }
}

/// One `s3Credentials` entry of the config file.
struct S3CredentialOption: Sendable {
    var accessKey: String
    var secret: String
    var buckets: [String]? = nil
    /// The account identity S3 shows (`canonicalId`, `displayName`, `accountId`); nil derives one.
    var canonicalID: String? = nil
    var displayName: String? = nil
    var accountID: String? = nil
}

/// One `s3KmsKeys` entry of the config file: a KMS key of the local key ring.
struct S3KMSKeyOption: Sendable {
    var keyID: String?
    var alias: String?
    /// The access key whose account owns the key (nil: the first key's).
    var accessKey: String?
}
