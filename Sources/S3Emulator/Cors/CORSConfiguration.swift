import HearthCore

/// A bucket's CORS configuration: the rules S3 evaluates, first match wins, for a preflight
/// `OPTIONS` and for every request that carries an `Origin`.
///
/// Related: PutBucketCors, CORSRule and "Elements of a CORS configuration" (S3 user guide): an
/// origin and a header may hold one `*` wildcard, methods are GET PUT HEAD POST DELETE, a
/// configuration has at most 100 rules.
struct CORSConfiguration: Sendable, Equatable {
    var rules: [CORSRule]

    static let maxRules = 100
    /// The methods a rule may allow.
    static let methods: Set<String> = ["GET", "PUT", "HEAD", "POST", "DELETE"]
    /// `Vary` on every response a rule matched.
    static let vary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

    // MARK: PutBucketCors document

    /// Parses and validates a PutBucketCors body as S3 does: the schema (`MalformedXML`), then each
    /// rule's values (`InvalidRequest`, `InvalidArgument`).
    static func parse(_ body: [UInt8]) -> Result<CORSConfiguration, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "CORSConfiguration",
              root.children.allSatisfy({ $0.name == "CORSRule" }) else { return .failure(.malformedXML) }
        guard (1...maxRules).contains(root.children.count) else { return .failure(.malformedXML) }
        var rules: [CORSRule] = []
        for element in root.children {
            var rule = CORSRule()
            for child in element.children {
                let text = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
                switch child.name {
                case "ID":
                    guard rule.id == nil else { return .failure(.malformedXML) }
                    rule.id = text
                case "AllowedHeader": rule.allowedHeaders.append(text)
                case "AllowedMethod": rule.allowedMethods.append(text)
                case "AllowedOrigin": rule.allowedOrigins.append(text)
                case "ExposeHeader": rule.exposeHeaders.append(text)
                case "MaxAgeSeconds":
                    guard rule.maxAgeSeconds == nil, let seconds = Int(text), Int32(exactly: seconds) != nil else { return .failure(.malformedXML) }
                    rule.maxAgeSeconds = seconds
                default:
                    return .failure(.malformedXML)
                }
            }
            guard !rule.allowedOrigins.isEmpty, !rule.allowedMethods.isEmpty else { return .failure(.malformedXML) }
            if let id = rule.id, id.count > 255 {
                return .failure(.invalidArgument(message: "ID length should not exceed allowed limit of 255", name: "ID", value: id))
            }
            for method in rule.allowedMethods where !methods.contains(method) {
                return .failure(.invalidRequest(message: "Found unsupported HTTP method in CORS config. Unsupported method is \(method)"))
            }
            for origin in rule.allowedOrigins where wildcards(origin) > 1 {
                return .failure(.invalidRequest(message: "AllowedOrigin \"\(origin)\" can not have more than one wildcard."))
            }
            for header in rule.allowedHeaders where wildcards(header) > 1 {
                return .failure(.invalidRequest(message: "AllowedHeader \"\(header)\" can not have more than one wildcard."))
            }
            for header in rule.exposeHeaders where wildcards(header) > 0 {
                return .failure(.invalidRequest(message:
                    "ExposeHeader \"\(header)\" contains wildcard. We currently do not support wildcard for ExposeHeader."))
            }
            rules.append(rule)
        }
        return .success(CORSConfiguration(rules: rules))
    }

    private static func wildcards(_ text: String) -> Int { text.utf8.reduce(0) { $0 + ($1 == 0x2A ? 1 : 0) } }

    /// The GetBucketCors document.
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("CORSConfiguration", namespace: true) { x in
            for rule in rules {
                x.group("CORSRule") { x in
                    x.element("ID", ifPresent: rule.id)
                    for h in rule.allowedHeaders { x.element("AllowedHeader", h) }
                    for m in rule.allowedMethods { x.element("AllowedMethod", m) }
                    for o in rule.allowedOrigins { x.element("AllowedOrigin", o) }
                    for h in rule.exposeHeaders { x.element("ExposeHeader", h) }
                    x.element("MaxAgeSeconds", ifPresent: rule.maxAgeSeconds.map(String.init))
                }
            }
        }
        return x
    }

    // MARK: Storage form

    /// The configuration as stored (a JSON array of rules).
    var json: JSON {
        .array(rules.map { rule in
            var o = JSONObject()
            if let id = rule.id { o["id"] = .string(id) }
            o["allowedHeaders"] = .array(rule.allowedHeaders.map(JSON.string))
            o["allowedMethods"] = .array(rule.allowedMethods.map(JSON.string))
            o["allowedOrigins"] = .array(rule.allowedOrigins.map(JSON.string))
            o["exposeHeaders"] = .array(rule.exposeHeaders.map(JSON.string))
            if let age = rule.maxAgeSeconds { o["maxAgeSeconds"] = .int(Int64(age)) }
            return .object(o)
        })
    }

    /// Reads `json` back; nil when it is not a stored configuration.
    init?(json: JSON) {
        guard let items = json.arrayValue else { return nil }
        func strings(_ value: JSON?) -> [String] { value?.arrayValue?.compactMap(\.stringValue) ?? [] }
        rules = items.map { item in
            CORSRule(id: item["id"]?.stringValue, allowedHeaders: strings(item["allowedHeaders"]),
                     allowedMethods: strings(item["allowedMethods"]), allowedOrigins: strings(item["allowedOrigins"]),
                     exposeHeaders: strings(item["exposeHeaders"]), maxAgeSeconds: item["maxAgeSeconds"]?.intValue.map { Int($0) })
        }
    }

    init(rules: [CORSRule]) {
        self.rules = rules
    }

    /// The rule `--s3-cors-origins` lends to buckets without a configuration: the given origins,
    /// every method and header, and the response headers a web client reads (ETag, Location, the
    /// request ids, checksums and Hearth's diagnosis).
    static func permissive(origins: [String]) -> CORSConfiguration {
        CORSConfiguration(rules: [CORSRule(
            id: "hearth-default", allowedHeaders: ["*"], allowedMethods: ["GET", "PUT", "HEAD", "POST", "DELETE"],
            allowedOrigins: origins,
            exposeHeaders: ["ETag", "Location", "Content-Range", "x-amz-request-id", "x-amz-id-2", "x-amz-version-id",
                            "x-amz-server-side-encryption", "x-amz-checksum-crc32", "x-amz-checksum-crc32c",
                            "x-amz-checksum-crc64nvme", "x-amz-checksum-sha1", "x-amz-checksum-sha256", "x-amz-checksum-type",
                            "x-hearth-diagnosis"],
            maxAgeSeconds: 3000)])
    }

    // MARK: Evaluation

    /// A rule that allows a request.
    struct Match: Sendable, Equatable {
        let rule: CORSRule
        /// Whether it allowed the origin through `*` (answered `*`, without credentials).
        let anyOrigin: Bool
    }

    /// The first rule allowing `origin` to use `method` with `requestHeaders` (lower-cased names
    /// from `Access-Control-Request-Headers`), as S3 evaluates rules.
    func match(origin: String, method: String, requestHeaders: [String]) -> Match? {
        for rule in rules where rule.allowedMethods.contains(method) {
            guard let pattern = rule.allowedOrigins.first(where: { CORSConfiguration.wildcardMatch($0, origin, caseInsensitive: false) }) else {
                continue
            }
            let headersAllowed = requestHeaders.allSatisfy { header in
                rule.allowedHeaders.contains { CORSConfiguration.wildcardMatch($0, header, caseInsensitive: true) }
            }
            if headersAllowed { return Match(rule: rule, anyOrigin: pattern == "*") }
        }
        return nil
    }

    /// Whether `value` matches `pattern`, whose one `*` stands for any run of characters
    /// (including none); the whole value must match.
    static func wildcardMatch(_ pattern: String, _ value: String, caseInsensitive: Bool) -> Bool {
        let p = Array((caseInsensitive ? pattern.lowercased() : pattern).utf8)
        let v = Array((caseInsensitive ? value.lowercased() : value).utf8)
        guard let star = p.firstIndex(of: 0x2A) else { return p == v }
        let prefix = p[..<star], suffix = p[(star + 1)...]
        return v.count >= prefix.count + suffix.count && v.starts(with: prefix) && v.reversed().starts(with: suffix.reversed())
    }

    /// The names of an `Access-Control-Request-Headers` value: lower-cased, empty items dropped.
    static func requestHeaderNames(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// The `Access-Control-*` and `Vary` headers S3 answers for a matched rule.
    /// - Parameter requestHeaders: the preflight's requested headers, answered as allowed.
    static func responseHeaders(_ match: Match, origin: String, requestHeaders: [String]) -> [(String, String)] {
        var headers: [(String, String)] = [("Access-Control-Allow-Origin", match.anyOrigin ? "*" : origin)]
        headers.append(("Access-Control-Allow-Methods", match.rule.allowedMethods.joined(separator: ", ")))
        if !requestHeaders.isEmpty { headers.append(("Access-Control-Allow-Headers", requestHeaders.joined(separator: ", "))) }
        if !match.rule.exposeHeaders.isEmpty {
            headers.append(("Access-Control-Expose-Headers", match.rule.exposeHeaders.joined(separator: ", ")))
        }
        if let age = match.rule.maxAgeSeconds { headers.append(("Access-Control-Max-Age", String(age))) }
        if !match.anyOrigin { headers.append(("Access-Control-Allow-Credentials", "true")) }
        headers.append(("Vary", vary))
        return headers
    }

    /// Why no rule matched, in plain words (the preflight's diagnosis).
    func explainMismatch(origin: String, method: String, requestHeaders: [String]) -> String {
        var reasons: [String] = []
        for (index, rule) in rules.enumerated().prefix(5) {
            let label = "rule \(index + 1)" + (rule.id.map { " (\($0))" } ?? "")
            if !rule.allowedOrigins.contains(where: { CORSConfiguration.wildcardMatch($0, origin, caseInsensitive: false) }) {
                reasons.append("\(label) does not allow origin '\(origin)' (it allows \(rule.allowedOrigins.map { "'\($0)'" }.joined(separator: ", ")); scheme, host and port must match exactly)")
            } else if !rule.allowedMethods.contains(method) {
                reasons.append("\(label) does not allow method \(method) (it allows \(rule.allowedMethods.joined(separator: ", ")))")
            } else if let header = requestHeaders.first(where: { h in
                !rule.allowedHeaders.contains { CORSConfiguration.wildcardMatch($0, h, caseInsensitive: true) } }) {
                reasons.append("\(label) does not allow the request header '\(header)'"
                    + (rule.allowedHeaders.isEmpty ? " (it has no AllowedHeader)" : " (it allows \(rule.allowedHeaders.joined(separator: ", ")))"))
            }
        }
        if rules.count > 5 { reasons.append("and \(rules.count - 5) more rules") }
        return "No CORS rule of the bucket allows this request: " + reasons.joined(separator: "; ") + "."
    }
}
