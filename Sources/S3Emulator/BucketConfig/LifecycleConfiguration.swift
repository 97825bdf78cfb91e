import Foundation
import HearthCore

/// A bucket lifecycle configuration, validated as S3 validates PutBucketLifecycleConfiguration.
///
/// Related: LifecycleRule, LifecycleRuleFilter, LifecycleExpiration, Transition,
/// NoncurrentVersionExpiration, AbortIncompleteMultipartUpload, "Lifecycle configuration
/// elements", and S3's answers as recorded by others (LocalStack's AWS-validated tests, issues
/// quoting S3). `LifecycleRunner` applies the enabled rules on the emulator clock.
struct LifecycleConfiguration: Sendable, Equatable {
    var rules: [Rule]

    static let maxRules = 1000
    static let storageClasses: Set<String> = ["GLACIER", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "DEEP_ARCHIVE", "GLACIER_IR"]
    /// Largest ObjectSizeLessThan S3 accepts.
    static let maxObjectSize: Int64 = 1_099_511_627_776_000

    struct Rule: Sendable, Equatable {
        var id: String
        var status: String
        /// A rule-level `Prefix` (the older form), or nil for a `Filter`.
        var legacyPrefix: String?
        var filter: Filter?
        var expiration: Expiration?
        var transitions: [Transition] = []
        var noncurrentTransitions: [NoncurrentTransition] = []
        var noncurrentExpiration: NoncurrentExpiration?
        var abortDaysAfterInitiation: Int64?
    }

    /// One predicate of a filter.
    enum Predicate: Sendable, Equatable {
        case prefix(String)
        case tag(key: String, value: String)
        case sizeGreaterThan(Int64)
        case sizeLessThan(Int64)
    }

    struct Filter: Sendable, Equatable {
        /// No predicate: every object.
        var predicates: [Predicate]
        /// Written as `<And>`.
        var isAnd: Bool

        var hasTags: Bool { predicates.contains { if case .tag = $0 { true } else { false } } }
        var hasSize: Bool {
            predicates.contains {
                switch $0 {
                case .sizeGreaterThan, .sizeLessThan: true
                default: false
                }
            }
        }
    }

    struct Expiration: Sendable, Equatable {
        var days: Int64?
        /// Midnight UTC.
        var date: Instant?
        var expiredObjectDeleteMarker: Bool?
    }

    struct Transition: Sendable, Equatable {
        var days: Int64?
        var date: Instant?
        var storageClass: String
    }

    struct NoncurrentTransition: Sendable, Equatable {
        var noncurrentDays: Int64?
        var newerNoncurrentVersions: Int64?
        var storageClass: String
    }

    struct NoncurrentExpiration: Sendable, Equatable {
        var noncurrentDays: Int64?
        var newerNoncurrentVersions: Int64?
    }

    // MARK: Parsing

    /// Parses and validates a PutBucketLifecycleConfiguration body; `newID` names rules sent
    /// without an ID (S3 makes one).
    static func parse(_ body: [UInt8], newID: () -> String) -> Result<LifecycleConfiguration, S3Error> {
        do throws(S3Error) {
            return .success(try parseOrThrow(body, newID: newID))
        } catch {
            return .failure(error)
        }
    }

    private static func parseOrThrow(_ body: [UInt8], newID: () -> String) throws(S3Error) -> LifecycleConfiguration {
        guard let root = try? S3XMLParser.parse(body), root.name == "LifecycleConfiguration",
              root.children.allSatisfy({ $0.name == "Rule" }), (1...maxRules).contains(root.children.count) else { throw .malformedXML }
        // The whole document is checked against the schema before any rule's values.
        var rules: [Rule] = []
        for element in root.children { rules.append(try schema(element, newID: newID)) }
        var ids = Set<String>()
        var sawFilter = false, sawPrefix = false
        for rule in rules {
            if rule.legacyPrefix != nil {
                if sawFilter { throw .invalidRequest(message: "Base level prefix cannot be used in Lifecycle V2, prefixes are only supported in the Filter.") }
                sawPrefix = true
            } else {
                if sawPrefix { throw .invalidRequest(message: "Filter element can only be used in Lifecycle V2.") }
                sawFilter = true
            }
            try validate(rule)
            guard ids.insert(rule.id).inserted else {
                throw .invalidArgument(message: "Rule ID must be unique. Found same ID for more than one rule", name: "ID", value: rule.id)
            }
        }
        return LifecycleConfiguration(rules: rules)
    }

    /// A rule's elements, their shapes and their value types (`MalformedXML` otherwise).
    private static func schema(_ element: XMLElement, newID: () -> String) throws(S3Error) -> Rule {
        var rule = Rule(id: "", status: "")
        var seen = Set<String>()
        var id: String?
        for child in element.children {
            let repeatable = child.name == "Transition" || child.name == "NoncurrentVersionTransition"
            guard repeatable || seen.insert(child.name).inserted else { throw .malformedXML }
            switch child.name {
            case "ID": id = child.text
            case "Status": rule.status = child.text
            case "Prefix": rule.legacyPrefix = child.text
            case "Filter": rule.filter = try filter(child)
            case "Expiration": rule.expiration = try expiration(child)
            case "Transition":
                let (days, date) = try daysOrDate(child, allowed: ["Days", "Date", "StorageClass"])
                rule.transitions.append(Transition(days: days, date: date, storageClass: try storageClass(child)))
            case "NoncurrentVersionTransition":
                try only(child, ["NoncurrentDays", "NewerNoncurrentVersions", "StorageClass"])
                rule.noncurrentTransitions.append(NoncurrentTransition(
                    noncurrentDays: try integer(child, "NoncurrentDays"), newerNoncurrentVersions: try integer(child, "NewerNoncurrentVersions"),
                    storageClass: try storageClass(child)))
            case "NoncurrentVersionExpiration":
                try only(child, ["NoncurrentDays", "NewerNoncurrentVersions"])
                let days = try integer(child, "NoncurrentDays")
                // An expiration of noncurrent versions needs its day count.
                guard days != nil else { throw .malformedXML }
                rule.noncurrentExpiration = NoncurrentExpiration(noncurrentDays: days, newerNoncurrentVersions: try integer(child, "NewerNoncurrentVersions"))
            case "AbortIncompleteMultipartUpload":
                try only(child, ["DaysAfterInitiation"])
                guard let days = try integer(child, "DaysAfterInitiation") else { throw .malformedXML }
                rule.abortDaysAfterInitiation = days
            default:
                throw .malformedXML
            }
        }
        guard rule.status == "Enabled" || rule.status == "Disabled" else { throw .malformedXML }
        // A rule names its objects with a Filter or (the older form) a Prefix.
        guard (rule.filter == nil) != (rule.legacyPrefix == nil) else { throw .malformedXML }
        if let id, !id.isEmpty {
            rule.id = id
        } else {
            rule.id = newID()
        }
        return rule
    }

    private static func only(_ element: XMLElement, _ names: Set<String>) throws(S3Error) {
        var seen = Set<String>()
        for child in element.children {
            guard names.contains(child.name), seen.insert(child.name).inserted else { throw .malformedXML }
        }
    }

    private static func integer(_ element: XMLElement, _ name: String) throws(S3Error) -> Int64? {
        guard let text = element.childText(name) else { return nil }
        guard let value = XMLValues.integer(text), Int32(exactly: value) != nil || name.hasPrefix("ObjectSize") else { throw .malformedXML }
        return value
    }

    private static func storageClass(_ element: XMLElement) throws(S3Error) -> String {
        guard let value = element.childText("StorageClass"), storageClasses.contains(value) else { throw .malformedXML }
        return value
    }

    private static func date(_ text: String) throws(S3Error) -> Instant {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let instant = Instant(rfc3339: t) ?? (t.count == 10 ? Instant(rfc3339: t + "T00:00:00Z") : nil) else { throw .malformedXML }
        guard instant.unixMicros % 86_400_000_000 == 0 else {
            throw .invalidArgument(message: "'Date' must be at midnight GMT", name: "Date", value: text)
        }
        return instant
    }

    private static func daysOrDate(_ element: XMLElement, allowed: Set<String>) throws(S3Error) -> (Int64?, Instant?) {
        try only(element, allowed)
        let days = try integer(element, "Days")
        let date = try element.childText("Date").map { (text: String) throws(S3Error) -> Instant in try self.date(text) }
        guard (days == nil) != (date == nil) else { throw .malformedXML }
        return (days, date)
    }

    private static func expiration(_ element: XMLElement) throws(S3Error) -> Expiration {
        try only(element, ["Days", "Date", "ExpiredObjectDeleteMarker"])
        var out = Expiration()
        out.days = try integer(element, "Days")
        if let text = element.childText("Date") { out.date = try date(text) }
        if let text = element.childText("ExpiredObjectDeleteMarker") {
            guard let value = XMLValues.bool(text) else { throw .malformedXML }
            out.expiredObjectDeleteMarker = value
        }
        let given = [out.days != nil, out.date != nil, out.expiredObjectDeleteMarker != nil].filter { $0 }.count
        // Exactly one of Days, Date and ExpiredObjectDeleteMarker.
        guard given == 1 else { throw .malformedXML }
        return out
    }

    private static func filter(_ element: XMLElement) throws(S3Error) -> Filter {
        guard element.children.count <= 1 else { throw .malformedXML }
        guard let only = element.children.first else { return Filter(predicates: [], isAnd: false) }
        if only.name == "And" {
            var predicates: [Predicate] = []
            for child in only.children { predicates.append(try predicate(child)) }
            // An And joins two predicates or more.
            guard predicates.count >= 2 else { throw .malformedXML }
            guard predicates.filter({ if case .prefix = $0 { true } else { false } }).count <= 1 else { throw .malformedXML }
            return Filter(predicates: predicates, isAnd: true)
        }
        return Filter(predicates: [try predicate(only)], isAnd: false)
    }

    private static func predicate(_ element: XMLElement) throws(S3Error) -> Predicate {
        switch element.name {
        case "Prefix": return .prefix(element.text)
        case "Tag":
            guard element.children.count == 2, let key = element.childText("Key"), let value = element.childText("Value") else {
                throw .malformedXML
            }
            return .tag(key: key, value: value)
        case "ObjectSizeGreaterThan", "ObjectSizeLessThan":
            guard let value = XMLValues.integer(element.text) else { throw .malformedXML }
            return element.name == "ObjectSizeLessThan" ? .sizeLessThan(value) : .sizeGreaterThan(value)
        default:
            throw .malformedXML
        }
    }

    /// A rule's values, with S3's `InvalidArgument` / `InvalidRequest` answers.
    private static func validate(_ rule: Rule) throws(S3Error) {
        if rule.id.count > 255 {
            throw .invalidArgument(message: "ID length should not exceed allowed limit of 255", name: "ID", value: rule.id)
        }
        if let filter = rule.filter {
            var tagKeys = Set<String>()
            var greater: Int64?, less: Int64?
            for p in filter.predicates {
                switch p {
                case .tag(let key, _):
                    guard tagKeys.insert(key).inserted else { throw .invalidRequest(message: "Duplicate Tag Keys are not allowed.") }
                case .sizeLessThan(let n):
                    guard (1...maxObjectSize).contains(n) else {
                        throw .invalidRequest(message: "'ObjectSizeLessThan' should be between 1 and \(maxObjectSize).")
                    }
                    less = n
                case .sizeGreaterThan(let n):
                    guard (0..<maxObjectSize).contains(n) else {
                        throw .invalidRequest(message: "'ObjectSizeGreaterThan' should be between 0 and \(maxObjectSize - 1).")
                    }
                    greater = n
                case .prefix: break
                }
            }
            if let greater, let less, less <= greater {
                throw .invalidRequest(message: "'ObjectSizeLessThan' has to be a value greater than 'ObjectSizeGreaterThan'.")
            }
        }
        let hasAction = rule.expiration != nil || !rule.transitions.isEmpty || !rule.noncurrentTransitions.isEmpty
            || rule.noncurrentExpiration != nil || rule.abortDaysAfterInitiation != nil
        guard hasAction else { throw .invalidRequest(message: "At least one action needs to be specified in a rule") }
        if let expiration = rule.expiration {
            if let days = expiration.days, days <= 0 {
                throw .invalidArgument(message: "'Days' for Expiration action must be a positive integer", name: "Days", value: String(days))
            }
            if expiration.expiredObjectDeleteMarker != nil, rule.filter?.hasSize == true {
                throw .invalidRequest(message: "ExpiredObjectDeleteMarker cannot be specified with Object Size.")
            }
            if expiration.expiredObjectDeleteMarker == true, rule.filter?.hasTags == true {
                throw .invalidRequest(message: "ExpiredObjectDeleteMarker cannot be specified with Tags.")
            }
        }
        for t in rule.transitions {
            if let days = t.days {
                if days < 0 {
                    throw .invalidArgument(message: "'Days' for Transition action must be a positive integer", name: "Days", value: String(days))
                }
                if (t.storageClass == "STANDARD_IA" || t.storageClass == "ONEZONE_IA") && days < 30 {
                    throw .invalidArgument(message: "'Days' in Transition action must be greater than or equal to 30 for storageClass '\(t.storageClass)'",
                                           name: "Days", value: String(days))
                }
            }
        }
        for t in rule.noncurrentTransitions {
            guard let days = t.noncurrentDays else { throw .malformedXML }
            if days < 0 {
                throw .invalidArgument(message: "'NoncurrentDays' for NoncurrentVersionTransition action must be a positive integer",
                                       name: "NoncurrentDays", value: String(days))
            }
            if (t.storageClass == "STANDARD_IA" || t.storageClass == "ONEZONE_IA") && days < 30 {
                throw .invalidArgument(message: "'NoncurrentDays' in NoncurrentVersionTransition action must be greater than or equal to 30 for storageClass '\(t.storageClass)'",
                                       name: "NoncurrentDays", value: String(days))
            }
            if t.newerNoncurrentVersions != nil, rule.legacyPrefix != nil {
                throw .invalidRequest(message: "NewerNoncurrentVersions element can only be used in Lifecycle V2.")
            }
        }
        if let e = rule.noncurrentExpiration {
            if let days = e.noncurrentDays, days <= 0 {
                throw .invalidArgument(message: "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer",
                                       name: "NoncurrentDays", value: String(days))
            }
            if let newer = e.newerNoncurrentVersions {
                if rule.legacyPrefix != nil { throw .invalidRequest(message: "NewerNoncurrentVersions element can only be used in Lifecycle V2.") }
                if newer <= 0 {
                    throw .invalidArgument(message: "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer",
                                           name: "NewerNoncurrentVersions", value: String(newer))
                }
            }
        }
        if let days = rule.abortDaysAfterInitiation {
            if rule.filter?.hasTags == true { throw .invalidRequest(message: "AbortIncompleteMultipartUpload cannot be specified with Tags.") }
            if rule.filter?.hasSize == true { throw .invalidRequest(message: "AbortIncompleteMultipartUpload cannot be specified with Object Size.") }
            if days <= 0 {
                throw .invalidArgument(message: "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer",
                                       name: "DaysAfterInitiation", value: String(days))
            }
        }
    }

    // MARK: The document

    /// The GetBucketLifecycleConfiguration document: each rule's ID, Filter (or Prefix), Status,
    /// then its actions, as S3 writes them.
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("LifecycleConfiguration", namespace: true) { x in
            for rule in rules {
                x.group("Rule") { x in
                    x.element("ID", rule.id)
                    if let prefix = rule.legacyPrefix { x.element("Prefix", prefix) }
                    if let filter = rule.filter { Self.write(filter, &x) }
                    x.element("Status", rule.status)
                    if let e = rule.expiration {
                        x.group("Expiration") { x in
                            if let date = e.date { x.element("Date", date.rfc3339(fractionDigits: 3)) }
                            if let days = e.days { x.element("Days", String(days)) }
                            if let marker = e.expiredObjectDeleteMarker { x.element("ExpiredObjectDeleteMarker", String(marker)) }
                        }
                    }
                    for t in rule.transitions {
                        x.group("Transition") { x in
                            if let date = t.date { x.element("Date", date.rfc3339(fractionDigits: 3)) }
                            if let days = t.days { x.element("Days", String(days)) }
                            x.element("StorageClass", t.storageClass)
                        }
                    }
                    for t in rule.noncurrentTransitions {
                        x.group("NoncurrentVersionTransition") { x in
                            if let days = t.noncurrentDays { x.element("NoncurrentDays", String(days)) }
                            x.element("StorageClass", t.storageClass)
                            if let newer = t.newerNoncurrentVersions { x.element("NewerNoncurrentVersions", String(newer)) }
                        }
                    }
                    if let e = rule.noncurrentExpiration {
                        x.group("NoncurrentVersionExpiration") { x in
                            if let days = e.noncurrentDays { x.element("NoncurrentDays", String(days)) }
                            if let newer = e.newerNoncurrentVersions { x.element("NewerNoncurrentVersions", String(newer)) }
                        }
                    }
                    if let days = rule.abortDaysAfterInitiation {
                        x.group("AbortIncompleteMultipartUpload") { $0.element("DaysAfterInitiation", String(days)) }
                    }
                }
            }
        }
        return x
    }

    private static func write(_ filter: Filter, _ x: inout XMLWriter) {
        guard !filter.predicates.isEmpty else {
            x.empty("Filter")
            return
        }
        x.group("Filter") { x in
            if filter.isAnd {
                x.group("And") { x in for p in filter.predicates { write(p, &x) } }
            } else {
                for p in filter.predicates { write(p, &x) }
            }
        }
    }

    private static func write(_ predicate: Predicate, _ x: inout XMLWriter) {
        switch predicate {
        case .prefix(let p): x.element("Prefix", p)
        case .tag(let key, let value):
            x.group("Tag") { x in
                x.element("Key", key)
                x.element("Value", value)
            }
        case .sizeGreaterThan(let n): x.element("ObjectSizeGreaterThan", String(n))
        case .sizeLessThan(let n): x.element("ObjectSizeLessThan", String(n))
        }
    }
}
