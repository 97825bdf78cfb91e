import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import S3Emulator

/// An object version whose stored Object Lock settings cannot be read (a damaged `extra` column,
/// a mode or date no Hearth writes) is kept as locked: reading the settings as "none" let a
/// version under COMPLIANCE retention or a legal hold be deleted for good (fail open).
@Suite struct ObjectLockUnreadableTests {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String] = []
        var all: [String] { lock.lock(); defer { lock.unlock() }; return kept }
        func append(_ s: String) { lock.lock(); kept.append(s); lock.unlock() }
    }

    /// Damaged forms of the settings of a version under COMPLIANCE retention until 2027-06-01.
    static let damaged: [(String, String)] = [
        ("truncated JSON", #"{"lockMode":"COMPLIANCE","lockRetainUntil":"2027-06-01T00:00:00.000Z""#),
        ("not an object", #"["COMPLIANCE"]"#),
        ("a date that does not parse", #"{"lockMode":"COMPLIANCE","lockRetainUntil":"June 2027"}"#),
        ("a mode S3 has not", #"{"lockMode":"compliance","lockRetainUntil":"2027-06-01T00:00:00.000Z"}"#),
        ("a mode without its date", #"{"lockMode":"COMPLIANCE"}"#),
        ("a legal hold that is no boolean", #"{"legalHold":"true"}"#),
    ]

    /// A lock bucket holding one version under COMPLIANCE retention, its `extra` replaced by
    /// `stored`, served by a new service over the same database (nothing cached).
    static func damagedVersion(_ stored: String, lines: Lines) throws -> (S3Harness, String) {
        let first = try S3Harness()
        #expect(first.call("PUT", "/vault", headers: [("x-amz-bucket-object-lock-enabled", "true")]).status == 200)
        let put = first.put("vault", "doc", Array("keep me".utf8), headers: [
            ("x-amz-object-lock-mode", "COMPLIANCE"), ("x-amz-object-lock-retain-until-date", "2027-06-01T00:00:00Z"),
        ])
        #expect(put.status == 200)
        let version = try #require(put.header("x-amz-version-id"))
        try first.database.write { c in
            try c.run("UPDATE s3_objects SET extra = ? WHERE bucket = 'vault' AND key = 'doc'", [stored])
            #expect(c.changes == 1)
        }
        let s3 = try S3Harness(database: first.database, logger: Logger(quiet: true, sink: { lines.append($0) }))
        return (s3, version)
    }

    static func versionsLeft(_ s3: S3Harness) throws -> Int64? {
        try s3.database.read { c in
            try c.scalarInt("SELECT (SELECT count(*) FROM s3_objects WHERE bucket = 'vault') + (SELECT count(*) FROM s3_object_versions WHERE bucket = 'vault')")
        }
    }

    @Test(arguments: damaged)
    func aVersionWithUnreadableLockSettingsIsNotDeleted(_ name: String, _ stored: String) throws {
        let lines = Lines()
        let (s3, version) = try Self.damagedVersion(stored, lines: lines)
        let bypass = [("x-amz-bypass-governance-retention", "true")]
        let delete = s3.call("DELETE", "/vault/doc?versionId=\(version)", headers: bypass)
        #expect(delete.status == 403, "\(name)")
        #expect(delete.errorCode == "AccessDenied", "\(name)")
        let body = Array("<Delete><Object><Key>doc</Key><VersionId>\(version)</VersionId></Object></Delete>".utf8)
        let batch = s3.call("POST", "/vault?delete", headers: bypass + [("Content-MD5", S3Harness.base64MD5(body))], body: body)
        #expect(batch.status == 200, "\(name)")
        #expect(batch.xml?.child("Error")?.childText("Code") == "AccessDenied", "\(name)")
        #expect(batch.xml?.child("Deleted") == nil, "\(name)")
        #expect(try Self.versionsLeft(s3) == 1, "\(name)")
        // Every refusal is logged with what could not be read.
        #expect(lines.all.filter { $0.contains("Object Lock settings are unreadable") }.count == 2, "\(name): \(lines.all)")
    }

    /// Changing the settings would rewrite the unreadable form with the defaults (no lock): a
    /// legal hold turned off, an ACL replaced, a retention shortened are refused instead, and the
    /// stored form stays as it was.
    @Test(arguments: damaged)
    func unreadableLockSettingsAreNotRewritten(_ name: String, _ stored: String) throws {
        let lines = Lines()
        let (s3, version) = try Self.damagedVersion(stored, lines: lines)
        let hold = Array("<LegalHold><Status>OFF</Status></LegalHold>".utf8)
        let retention = Array("<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2026-12-01T00:00:00Z</RetainUntilDate></Retention>".utf8)
        let holdMD5 = S3Harness.base64MD5(hold), retentionMD5 = S3Harness.base64MD5(retention)
        #expect(s3.call("PUT", "/vault/doc?legal-hold&versionId=\(version)", headers: [("Content-MD5", holdMD5)], body: hold).status == 403, "\(name)")
        #expect(s3.call("PUT", "/vault/doc?retention&versionId=\(version)", headers: [("Content-MD5", retentionMD5), ("x-amz-bypass-governance-retention", "true")],
                        body: retention).status == 403, "\(name)")
        let kept: String? = try s3.database.read { c in
            try c.first("SELECT extra FROM s3_objects WHERE bucket = 'vault' AND key = 'doc'") { $0.optionalText(0) } ?? nil
        }
        #expect(kept == stored, "\(name)")
        #expect(s3.call("DELETE", "/vault/doc?versionId=\(version)").status == 403, "\(name)")
    }

    /// The same settings read whole keep deciding as before: the retention ends, the version goes.
    @Test func readableSettingsStillExpire() throws {
        let lines = Lines()
        let (s3, version) = try Self.damagedVersion(#"{"lockMode":"COMPLIANCE","lockRetainUntil":"2026-12-01T00:00:00.000Z"}"#, lines: lines)
        #expect(s3.call("DELETE", "/vault/doc?versionId=\(version)").status == 403)
        s3.clock.freeze(at: Instant(rfc3339: "2026-12-01T00:00:01Z")!)
        #expect(s3.call("DELETE", "/vault/doc?versionId=\(version)").status == 204)
        #expect(try Self.versionsLeft(s3) == 0)
        #expect(lines.all.isEmpty)
    }
}
