/// How long a RestoreObject takes before the restored copy can be read (`--s3-restore-time`).
///
/// S3 takes minutes to days (its documented retrieval times per storage class and tier); an app's
/// tests mostly want the copy at once, which is the default. `seconds` makes every restore take
/// that long on the emulator clock, `aws` uses the upper end of S3's documented time for the
/// object's class and the request's tier — with the hub's clock endpoint a test moves past it
/// instead of waiting. While a restore is under way HEAD says `ongoing-request="true"`, reads stay
/// refused and a second restore is 409 `RestoreAlreadyInProgress` unless it asks for a faster tier.
public enum RestoreTiming: Sendable, Equatable {
    case instant
    case seconds(Int64)
    case aws

    /// Parses the flag's value: `instant`, `aws`, or a whole number of seconds (0 is `instant`).
    public init?(flag: String) {
        switch flag {
        case "instant": self = .instant
        case "aws": self = .aws
        default:
            guard let n = Int64(flag), n >= 0, n <= 30 * 86_400 else { return nil }
            self = n == 0 ? .instant : .seconds(n)
        }
    }

    /// The tier S3 uses when the request names none.
    static let defaultTier = "Standard"

    /// Faster tiers first: a restore under way may be sped up by asking for an earlier one.
    static func rank(_ tier: String) -> Int {
        switch tier {
        case "Expedited": 0
        case "Standard": 1
        default: 2
        }
    }

    /// Seconds from accepting a restore of a `storageClass` object at `tier` to its copy being readable.
    func delay(storageClass: String, tier: String) -> Int64 {
        switch self {
        case .instant: return 0
        case .seconds(let n): return n
        case .aws:
            // S3's documented upper bounds: Glacier Flexible Retrieval Expedited 1–5 minutes,
            // Standard 3–5 hours, Bulk 5–12 hours; Deep Archive Standard within 12 hours, Bulk
            // within 48. Deep Archive has no Expedited tier; Hearth gives such a request the
            // Standard time rather than invent an error S3 does not document.
            let hour: Int64 = 3_600
            if storageClass == "DEEP_ARCHIVE" { return tier == "Bulk" ? 48 * hour : 12 * hour }
            switch tier {
            case "Expedited": return 5 * 60
            case "Bulk": return 12 * hour
            default: return 5 * hour
            }
        }
    }
}
