import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import StorageEmulator

/// Stored access control that no longer decodes (a damaged row, or one an older Hearth wrote
/// under looser checks) fails closed: the public URL refuses the anonymous read and says why in
/// a warning, the JSON API will not show or merge into a default the row does not hold, and
/// writes of the other columns put the damaged text back unchanged.
@Suite struct UnreadableAccessTests {
    let b = StorageHarness.bucket

    /// A harness whose warnings are kept.
    func harness() throws -> (StorageHarness, Lines) {
        let lines = Lines()
        return (try StorageHarness(logger: Logger(quiet: true, sink: { lines.append($0) })), lines)
    }

    func json(_ h: StorageHarness, _ method: String, _ path: String, _ body: String = "") -> TestResponse {
        h.send(method, path, body: Array(body.utf8))
    }

    func damage(_ h: StorageHarness, _ sql: String, _ text: String) throws {
        try h.database.write { c in
            try c.run(sql, [text])
            #expect(c.changes == 1)
        }
    }

    func column(_ h: StorageHarness, _ sql: String) throws -> String? {
        try h.database.read { c in try c.first(sql, []) { $0.optionalText(0) } } ?? nil
    }

    @Test func unreadableSettingsDenyWhatPublicAccessPreventionRefused() throws {
        let (h, lines) = try harness()
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=p&predefinedAcl=publicRead", body: Array("hi".utf8))
        #expect(h.send("GET", "/\(b)/p").status == 200)
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)", #"{"iamConfiguration": {"publicAccessPrevention": "enforced"}}"#).status == 200)
        #expect(h.send("GET", "/\(b)/p").status == 403)
        // A truncated row: read as `{}` it would drop the prevention and serve the object to anyone.
        let damaged = #"{"iamConfiguration": {"publicAccessPrevention": "enforced""#
        try damage(h, "UPDATE storage_buckets SET settings = ? WHERE name = 'demo.appspot.com'", damaged)
        let refused = h.send("GET", "/\(b)/p")
        #expect(refused.status == 403 && String(decoding: refused.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
        #expect(h.send("GET", "/\(b)/missing").status == 403)
        #expect(lines.all.contains { $0.contains("WARNING") && $0.contains("bucket=demo.appspot.com") && $0.contains("bucket settings") })
        // So is a value that parses but is not one Hearth writes.
        try damage(h, "UPDATE storage_buckets SET settings = ? WHERE name = 'demo.appspot.com'",
                   #"{"iamConfiguration": {"publicAccessPrevention": true}}"#)
        #expect(h.send("GET", "/\(b)/p").status == 403)
        try damage(h, "UPDATE storage_buckets SET settings = ? WHERE name = 'demo.appspot.com'", damaged)
        // A merge would write the default over the row; a write of another column keeps it.
        let merge = json(h, "PATCH", "/storage/v1/b/\(b)", #"{"labels": {"a": "1"}}"#)
        #expect(merge.status == 500 && merge.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "backendError")
        #expect(json(h, "PUT", "/storage/v1/b/\(b)/iam", #"{"bindings": []}"#).status == 200)
        #expect(json(h, "POST", "/storage/v1/b/\(b)/acl", #"{"entity": "user-a@example.com", "role": "READER"}"#).status == 200)
        #expect(try column(h, "SELECT settings FROM storage_buckets WHERE name = 'demo.appspot.com'") == damaged)
        #expect(h.send("GET", "/\(b)/p").status == 403)
        // A PUT replaces the settings whole: the row is readable again, with no prevention.
        #expect(json(h, "PUT", "/storage/v1/b/\(b)", "{}").status == 200)
        #expect(h.send("GET", "/\(b)/p").status == 200)
    }

    @Test func anUnreadableObjectACLIsNotTheBucketDefault() throws {
        let (h, lines) = try harness()
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)?predefinedDefaultObjectAcl=publicRead", "{}").status == 200)
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=secret&predefinedAcl=private", body: Array("s".utf8))
        #expect(h.send("GET", "/\(b)/secret").status == 403)
        // Read as "none stored", the bucket's publicRead default would apply.
        try damage(h, "UPDATE storage_objects SET acl = ? WHERE name = 'secret'", "[{\"entity\": \"user-")
        #expect(h.send("GET", "/\(b)/secret").status == 403)
        #expect(lines.all.contains { $0.contains("bucket=demo.appspot.com") && $0.contains("object=secret") && $0.contains("object acl") })
        // An entry that is not one GCS accepts is not dropped: the whole list is unreadable.
        try damage(h, "UPDATE storage_objects SET acl = ? WHERE name = 'secret'", #"[{"entity": "allUsers", "role": "READER"}, {"entity": 5}]"#)
        #expect(h.send("GET", "/\(b)/secret").status == 403)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/secret/acl").status == 500)
        #expect(json(h, "POST", "/storage/v1/b/\(b)/o/secret/acl", #"{"entity": "allUsers", "role": "READER"}"#).status == 500)
        let resource = json(h, "GET", "/storage/v1/b/\(b)/o/secret?projection=full")
        #expect(resource.status == 200 && resource.json["acl"] == nil)
        // A metadata change keeps the stored text; a whole new ACL replaces it.
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)/o/secret", #"{"contentType": "text/plain"}"#).status == 200)
        #expect(try column(h, "SELECT acl FROM storage_objects WHERE name = 'secret'")?.contains("{\"entity\": 5}") == true)
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)/o/secret?predefinedAcl=publicRead", "{}").status == 200)
        #expect(h.send("GET", "/\(b)/secret").body == Array("s".utf8))
    }

    @Test func anUnreadableDefaultObjectACLOrIAMPolicyDenies() throws {
        let (h, _) = try harness()
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=old", body: Array("o".utf8))
        // An object older than ACLs has none of its own: the bucket's default decides for it.
        try h.database.write { c in try c.run("UPDATE storage_objects SET acl = NULL WHERE name = 'old'") }
        try damage(h, "UPDATE storage_buckets SET default_object_acl = ? WHERE name = 'demo.appspot.com'", #"[{"entity": "allUsers"}]"#)
        #expect(h.send("GET", "/\(b)/old").status == 403)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/defaultObjectAcl").status == 500)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/old/acl").status == 500)
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)?predefinedDefaultObjectAcl=publicRead", "{}").status == 200)
        #expect(h.send("GET", "/\(b)/old").status == 200)
        // An IAM policy that does not decode answers no default in its place, and denies.
        try damage(h, "UPDATE storage_buckets SET iam_policy = ? WHERE name = 'demo.appspot.com'", #"{"bindings": "allUsers"}"#)
        #expect(h.send("GET", "/\(b)/old").status == 403)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/iam").status == 500)
        #expect(json(h, "PUT", "/storage/v1/b/\(b)/iam", #"{"bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}"#).status == 200)
        #expect(h.send("GET", "/\(b)/old").status == 200)
    }

    @Test func anExportCarriesUnreadableTextAsItIs() throws {
        let (h, _) = try harness()
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)?predefinedDefaultObjectAcl=publicRead", "{}").status == 200)
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=secret&predefinedAcl=private", body: Array("s".utf8))
        let damaged = #"[{"entity": "allUsers", "role": "READER"}, {"entity": 5}]"#
        try damage(h, "UPDATE storage_objects SET acl = ? WHERE name = 'secret'", damaged)
        let settings = #"{"iamConfiguration": {"publicAccessPrevention": "enforced""#
        try damage(h, "UPDATE storage_buckets SET settings = ? WHERE name = 'demo.appspot.com'", settings)
        let folder = NSTemporaryDirectory() + "storage-export-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try h.service.exportData(to: folder) == 1)
        let again = try StorageHarness()
        #expect(try again.service.importData(from: folder) == 1)
        #expect(try column(again, "SELECT acl FROM storage_objects WHERE name = 'secret'") == damaged)
        #expect(try column(again, "SELECT settings FROM storage_buckets WHERE name = 'demo.appspot.com'") == settings)
        #expect(again.send("GET", "/\(b)/secret").status == 403)
        // An exported ACL that does not decode stops the import rather than arriving as a default.
        let meta = folder + "/metadata/\(b)/secret.json"
        var edited = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: meta)))).objectValue ?? [:]
        edited["acl"] = .array([.object(["entity": .string("nobody"), "role": .string("READER")])])
        try Data(JSON.object(edited).serialized().utf8).write(to: URL(fileURLWithPath: meta))
        #expect(throws: (any Error).self) { try StorageHarness().service.importData(from: folder) }
    }
}

/// Log lines kept for a test to read.
final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
