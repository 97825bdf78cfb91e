import Foundation
import HearthCore

/// S3 Object Lock: a bucket's configuration and the rules that protect object versions.
///
/// Related: "Locking objects with Object Lock", PutObjectLockConfiguration, PutObjectRetention,
/// PutObjectLegalHold. A version under COMPLIANCE retention cannot be deleted (by version id) or
/// have its retention shortened until its date passes; GOVERNANCE allows both with
/// `x-amz-bypass-governance-retention: true`; a legal hold blocks deletion until removed. Dates
/// compare against the emulator clock, so moving the clock releases a lock.
enum ObjectLock {
    /// A bucket's Object Lock configuration.
    struct Configuration: Sendable, Equatable {
        /// The default retention applied to new versions: mode, and days or years.
        var defaultMode: String?
        var days: Int?
        var years: Int?

        /// Parses a PutObjectLockConfiguration body.
        static func parse(_ body: [UInt8]) -> Result<Configuration, S3Error> {
            guard let root = try? S3XMLParser.parse(body), root.name == "ObjectLockConfiguration",
                  root.childText("ObjectLockEnabled") == "Enabled" else { return .failure(.malformedXML) }
            var config = Configuration()
            guard let rule = root.child("Rule") else { return .success(config) }
            guard let retention = rule.child("DefaultRetention"), let mode = retention.childText("Mode"),
                  mode == "GOVERNANCE" || mode == "COMPLIANCE" else { return .failure(.malformedXML) }
            let days = retention.childText("Days"), years = retention.childText("Years")
            guard (days == nil) != (years == nil) else { return .failure(.malformedXML) }
            guard let n = Int(days ?? years ?? ""), n > 0 else {
                return .failure(.plain(.invalidRetentionPeriod(message: "Default retention period must be a positive integer value.")))
            }
            config.defaultMode = mode
            if days != nil { config.days = n } else { config.years = n }
            return .success(config)
        }

        /// The stored and returned document.
        var document: XMLWriter {
            var x = XMLWriter()
            x.group("ObjectLockConfiguration", namespace: true) { x in
                x.element("ObjectLockEnabled", "Enabled")
                if let mode = defaultMode {
                    x.group("Rule") { x in
                        x.group("DefaultRetention") { x in
                            x.element("Mode", mode)
                            if let d = days { x.element("Days", String(d)) }
                            if let y = years { x.element("Years", String(y)) }
                        }
                    }
                }
            }
            return x
        }

        /// The retention a new version gets from the default, from `now`.
        func defaultRetention(now: Instant) -> (mode: String, until: Instant)? {
            guard let mode = defaultMode else { return nil }
            // Either days or years is set, to any positive number the request gave: a period that
            // overflows or ends past year 9999 ends with the last instant a date can write.
            let (seconds, overflow) = Int64(days ?? years ?? 0).multipliedReportingOverflow(by: years != nil ? 365 * 86_400 : 86_400)
            guard !overflow, seconds <= Instant.latest.unixSeconds - now.unixSeconds else { return (mode, Instant.latest) }
            return (mode, Instant(unixMicros: now.unixMicros + seconds * 1_000_000))
        }
    }

    /// A retention date as S3 writes it (`2030-01-01T00:00:00.000Z`).
    static func format(_ instant: Instant) -> String { instant.rfc3339(fractionDigits: 3) }

    /// Throws `AccessDenied` when the version may not be deleted now, and `Unreadable` when its
    /// lock settings cannot be read (a damaged row): then it may not be deleted either.
    static func checkDeletable(_ extra: ObjectExtra, now: Instant, bypassGovernance: Bool) throws {
        if let why = extra.unreadable { throw Unreadable(reason: why) }
        if extra.legalHold { throw S3Error.plain(.objectLocked) }
        guard let mode = extra.lockMode, let until = extra.lockRetainUntil.flatMap({ Instant(rfc3339: $0) }),
              until.unixMicros > now.unixMicros else { return }
        if mode == "COMPLIANCE" || !bypassGovernance { throw S3Error.plain(.objectLocked) }
    }

    /// Whether the lifecycle runner must leave a version be: a legal hold, a retention date still
    /// ahead of `now`, or settings it cannot read.
    static func keeps(_ extra: ObjectExtra, now: Instant) -> Bool {
        if extra.unreadable != nil || extra.legalHold { return true }
        guard let until = extra.lockRetainUntil.flatMap({ Instant(rfc3339: $0) }) else { return false }
        return until.unixMicros > now.unixMicros
    }

    /// An object version whose Object Lock settings cannot be read: it is denied what a lock
    /// would deny (`AccessDenied`, as a locked version is), and `S3Service.attempt` logs why.
    struct Unreadable: Error, CustomStringConvertible {
        let reason: String
        var description: String { "the object's Object Lock settings are unreadable (\(reason)): kept as locked" }
    }

    /// Parses a date of an Object Lock header or document (RFC 3339, with or without fraction).
    static func parseDate(_ text: String) -> Instant? {
        Instant(rfc3339: text.trimmingCharacters(in: .whitespaces))
    }
}
