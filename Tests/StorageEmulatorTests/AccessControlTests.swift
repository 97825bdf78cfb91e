import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import StorageEmulator

/// Legacy ACLs, uniform bucket-level access, bucket PATCH and IAM through the JSON API, and the
/// public URL that enforces them for callers without credentials.
@Suite struct AccessControlTests {
    let b = StorageHarness.bucket
    static let owner = "user-demo@appspot.gserviceaccount.com"

    func put(_ h: StorageHarness, _ name: String, query: String = "") -> TestResponse {
        h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(name)\(query)", body: [1, 2, 3])
    }

    func json(_ h: StorageHarness, _ method: String, _ path: String, _ body: String = "") -> TestResponse {
        h.send(method, path, body: Array(body.utf8))
    }

    func entities(_ r: TestResponse) -> [String: String] {
        var out: [String: String] = [:]
        for item in r.json["items"]?.arrayValue ?? r.json["acl"]?.arrayValue ?? [] {
            out[item["entity"]?.stringValue ?? ""] = item["role"]?.stringValue
        }
        return out
    }

    @Test func aNewObjectHasItsOwnerAndTheBucketDefault() throws {
        let h = try StorageHarness()
        #expect(put(h, "o").json["acl"] == nil)
        let acl = json(h, "GET", "/storage/v1/b/\(b)/o/o/acl")
        #expect(acl.status == 200 && acl.json["kind"]?.stringValue == "storage#objectAccessControls")
        #expect(entities(acl) == [Self.owner: "OWNER", "project-owners-0": "OWNER", "project-editors-0": "OWNER", "project-viewers-0": "READER"])
        let full = json(h, "GET", "/storage/v1/b/\(b)/o/o?projection=full")
        #expect(full.json["owner"]?["entity"]?.stringValue == Self.owner && entities(full).count == 4)
        let team = acl.json["items"]?.arrayValue?.first { $0["entity"]?.stringValue == "project-viewers-0" }
        #expect(team?["projectTeam"] == .object(["projectNumber": .string("0"), "team": .string("viewers")]))
    }

    @Test func aclEntriesInsertPatchDeleteAndMetageneration() throws {
        let h = try StorageHarness()
        #expect(put(h, "o").json["metageneration"]?.stringValue == "1")
        let added = json(h, "POST", "/storage/v1/b/\(b)/o/o/acl", #"{"entity": "allUsers", "role": "READER"}"#)
        #expect(added.status == 200 && added.json["entity"]?.stringValue == "allUsers" && added.json["object"]?.stringValue == "o")
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/o").json["metageneration"]?.stringValue == "2")
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)/o/o/acl/allUsers", #"{"role": "OWNER"}"#).json["role"]?.stringValue == "OWNER")
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/o/acl/allUsers").json["role"]?.stringValue == "OWNER")
        #expect(json(h, "DELETE", "/storage/v1/b/\(b)/o/o/acl/allUsers").status == 204)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/o/acl/allUsers").status == 404)
        #expect(json(h, "DELETE", "/storage/v1/b/\(b)/o/o/acl/allUsers").status == 404)
        #expect(json(h, "PUT", "/storage/v1/b/\(b)/o/o/acl/allUsers", #"{"role": "READER"}"#).status == 404)
        // Objects have no WRITER; entities have fixed forms.
        #expect(json(h, "POST", "/storage/v1/b/\(b)/o/o/acl", #"{"entity": "allUsers", "role": "WRITER"}"#).status == 400)
        #expect(json(h, "POST", "/storage/v1/b/\(b)/o/o/acl", #"{"entity": "someone", "role": "READER"}"#).status == 400)
        // A PATCH of the resource with `acl` replaces the list and answers with projection=full.
        let patched = json(h, "PATCH", "/storage/v1/b/\(b)/o/o", #"{"acl": [{"entity": "user-A@Example.com", "role": "OWNER"}]}"#)
        #expect(entities(patched) == ["user-a@example.com": "OWNER"])
        #expect(patched.json["acl"]?[0]?["email"]?.stringValue == "a@example.com")
    }

    @Test func predefinedACLsOnUploadCopyAndPatch() throws {
        let h = try StorageHarness()
        #expect(put(h, "p", query: "&predefinedAcl=publicRead").status == 200)
        #expect(entities(json(h, "GET", "/storage/v1/b/\(b)/o/p/acl")) == [Self.owner: "OWNER", "allUsers": "READER"])
        #expect(put(h, "x", query: "&predefinedAcl=publicReadWrite").status == 400)
        let copied = json(h, "POST", "/storage/v1/b/\(b)/o/p/copyTo/b/\(b)/o/c?destinationPredefinedAcl=bucketOwnerRead")
        #expect(copied.status == 200)
        #expect(entities(json(h, "GET", "/storage/v1/b/\(b)/o/c/acl")) == [Self.owner: "OWNER", "project-owners-0": "READER"])
        #expect(entities(json(h, "PATCH", "/storage/v1/b/\(b)/o/c?predefinedAcl=private", "{}")) == [Self.owner: "OWNER"])
    }

    @Test func uniformAccessRefusesLegacyACLs() throws {
        let h = try StorageHarness()
        _ = put(h, "o")
        let on = json(h, "PATCH", "/storage/v1/b/\(b)", #"{"iamConfiguration": {"uniformBucketLevelAccess": {"enabled": true}}}"#)
        #expect(on.status == 200 && on.json["iamConfiguration"]?["bucketPolicyOnly"]?["enabled"] == .bool(true))
        #expect(on.json["iamConfiguration"]?["uniformBucketLevelAccess"]?["lockedTime"]?.stringValue == "2026-04-01T00:00:00.000Z")
        #expect(on.json["acl"] == nil && on.json["owner"] != nil)
        let get = json(h, "GET", "/storage/v1/b/\(b)/o/o/acl")
        #expect(get.status == 400 && get.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "invalid")
        #expect(get.json["error"]?["message"]?.stringValue?.hasPrefix("Cannot get legacy ACL for an object") == true)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/acl").json["error"]?["message"]?.stringValue?
            .hasPrefix("Cannot get legacy ACL for a bucket that has uniform bucket-level access.") == true)
        #expect(json(h, "POST", "/storage/v1/b/\(b)/defaultObjectAcl", #"{"entity": "allUsers", "role": "READER"}"#).status == 400)
        let refused = put(h, "p", query: "&predefinedAcl=publicRead")
        #expect(refused.status == 400 && refused.json["error"]?["message"]?.stringValue?.hasPrefix("Cannot insert legacy ACL for an object") == true)
        #expect(try h.count("storage_objects") == 1)
        #expect(put(h, "q").status == 200)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/q?projection=full").json["acl"] == nil)
        // Within the 90 days it can be turned off again.
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)", #"{"iamConfiguration": {"uniformBucketLevelAccess": {"enabled": false}}}"#).status == 200)
        #expect(json(h, "GET", "/storage/v1/b/\(b)/o/o/acl").status == 200)
    }

    @Test func bucketPatchMergesAndPutReplaces() throws {
        let h = try StorageHarness()
        let first = json(h, "PATCH", "/storage/v1/b/\(b)", #"{"labels": {"a": "1", "b": "2"}, "versioning": {"enabled": true}}"#)
        #expect(first.status == 200 && first.json["metageneration"]?.stringValue == "2" && first.json["etag"]?.stringValue == "CAI=")
        let second = json(h, "PATCH", "/storage/v1/b/\(b)", #"{"labels": {"a": null, "c": "3"}}"#)
        #expect(second.json["labels"] == .object(["b": .string("2"), "c": .string("3")]))
        #expect(second.json["versioning"] == .object(["enabled": .bool(true)]))
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)", #"{"labels": {"Upper": "x"}}"#).status == 400)
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)", #"{"lifecycle": {"rule": [{"action": {"type": "Explode"}, "condition": {}}]}}"#).status == 400)
        #expect(json(h, "PATCH", "/storage/v1/b/\(b)?ifMetagenerationMatch=1", #"{"labels": {}}"#).status == 412)
        let replaced = json(h, "PUT", "/storage/v1/b/\(b)", #"{"cors": [{"origin": ["*"]}]}"#)
        #expect(replaced.json["labels"] == nil && replaced.json["versioning"] == nil && replaced.json["cors"]?[0]?["origin"] != nil)
        #expect(json(h, "GET", "/storage/v1/b/\(b)").json["metageneration"]?.stringValue == "4")
    }

    @Test func iamPolicyRoundTripsWithItsEtag() throws {
        let h = try StorageHarness()
        let policy = json(h, "GET", "/storage/v1/b/\(b)/iam")
        #expect(policy.json["bindings"]?[0]?["members"]?.arrayValue?.contains(.string("projectOwner:demo")) == true)
        let set = json(h, "PUT", "/storage/v1/b/\(b)/iam",
                       #"{"etag": "CAE=", "bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}"#)
        #expect(set.status == 200 && set.json["etag"]?.stringValue == "CAI=")
        #expect(json(h, "PUT", "/storage/v1/b/\(b)/iam", #"{"etag": "CAE=", "bindings": []}"#).status == 412)
        #expect(json(h, "PUT", "/storage/v1/b/\(b)/iam", #"{"bindings": [{"role": "roles/x", "members": ["bob"]}]}"#).status == 400)
        let test = json(h, "GET", "/storage/v1/b/\(b)/iam/testPermissions?permissions=storage.objects.get&permissions=storage.buckets.update")
        #expect(test.json["permissions"] == .array([.string("storage.objects.get"), .string("storage.buckets.update")]))
        #expect(json(h, "GET", "/storage/v1/b/\(b)/iam/testPermissions?permissions=storage.objects.fly").status == 400)
    }

    @Test func thePublicURLServesWhatAllUsersMayRead() throws {
        let h = try StorageHarness()
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=a/b.txt", body: Array("hello".utf8))
        let denied = h.send("GET", "/\(b)/a/b.txt")
        #expect(denied.status == 403 && String(decoding: denied.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
        #expect(h.send("GET", "/\(b)/missing").status == 403)
        #expect(h.send("GET", "/\(b)/a/b.txt", headers: [("Authorization", "Bearer owner")]).body == Array("hello".utf8))
        _ = json(h, "POST", "/storage/v1/b/\(b)/o/a%2Fb.txt/acl", #"{"entity": "allUsers", "role": "READER"}"#)
        #expect(h.send("GET", "/\(b)/a/b.txt").body == Array("hello".utf8))
        #expect(h.send("GET", "/\(b)/a%2Fb.txt").body == Array("hello".utf8))
        // Uniform access stops legacy ACLs from granting anything.
        _ = json(h, "PATCH", "/storage/v1/b/\(b)", #"{"iamConfiguration": {"uniformBucketLevelAccess": {"enabled": true}}}"#)
        #expect(h.send("GET", "/\(b)/a/b.txt").status == 403)
        #expect(h.send("GET", "/no-such-bucket/x").status == 404)
    }
}

/// `softDeleted=true` and `restore`: Hearth keeps no soft-deleted generation.
@Suite struct SoftDeleteTests {
    @Test func softDeletedListingsAreEmptyAndNothingRestores() throws {
        let h = try StorageHarness()
        let b = StorageHarness.bucket
        #expect(h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=x", body: [1]).status == 200)
        #expect(h.send("GET", "/storage/v1/b/\(b)/o").json["items"]?.arrayValue?.count == 1)
        #expect(h.send("GET", "/storage/v1/b/\(b)/o?softDeleted=true").json["items"] == .array([]))
        #expect(h.send("GET", "/storage/v1/b/\(b)/o/x?softDeleted=true&generation=1").status == 404)
        #expect(h.send("POST", "/storage/v1/b/\(b)/o/x/restore?generation=1").status == 404)
        #expect(h.send("POST", "/storage/v1/b/nope/o/x/restore?generation=1").json["error"]?["message"]?.stringValue
            == "The specified bucket does not exist.")
        #expect(h.send("GET", "/storage/v1/b/\(b)").json["softDeletePolicy"]?["retentionDurationSeconds"]?.stringValue == "0")
    }
}
