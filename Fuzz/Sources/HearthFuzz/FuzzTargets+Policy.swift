import Foundation
import HearthCore
@testable import S3Emulator

/// S3's access documents a client writes: a PutBucketPolicy body (parsed, normalized and evaluated
/// for anonymous and signed callers with condition context: wildcards, policy variables, IP ranges,
/// dates and numbers), a browser form's POST policy (the same bytes base64-encoded, and as the form's
/// raw text) checked against a form, and IP addresses and ranges.
///
/// Invariants: the normalized document GetBucketPolicy returns is a policy S3 takes back, normalizes
/// to itself and decides every request as the original does; a range contains its own address.
extension FuzzTargets {
    static func policy(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let body = Array(bytes)
        if case .success(let policy) = BucketPolicy.parse(body, bucket: PolicyProbe.bucket) {
            guard case .success(let again) = BucketPolicy.parse(Array(policy.normalized.utf8), bucket: PolicyProbe.bucket) else {
                throw FuzzFailure("policy: the normalized document \(policy.normalized.debugDescription) does not parse")
            }
            guard again.normalized == policy.normalized, again.isPublic == policy.isPublic else {
                throw FuzzFailure("policy: normalized \(policy.normalized.debugDescription), again \(again.normalized.debugDescription)")
            }
            for probe in PolicyProbe.all {
                let first = probe.decide(policy), second = probe.decide(again)
                guard first == second else {
                    throw FuzzFailure("policy: \(probe) is \(first) by the document and \(second) by its normalized form \(policy.normalized.debugDescription)")
                }
            }
            FuzzChecks.count("policy")
        }
        // The POST policy: as a form sends it (base64), and the raw text through the lenient decoder.
        for field in [Data(body).base64EncodedString(), text(bytes)] {
            guard let post = try? PostPolicy.parse(base64: field) else { continue }
            _ = post.conditions.map(\.rendered)
            _ = post.lengthRanges
            for form in PolicyProbe.forms {
                _ = post.check(form, bucket: PolicyProbe.bucket, exempt: ["policy", "x-amz-signature", "file"])
            }
        }
        _ = PostPolicy.parseExpiration(text(bytes))
        for line in text(bytes).split(separator: "\n").prefix(8) {
            guard let network = IPNetwork(String(line)) else { continue }
            guard network.contains(network.bytes) else { throw FuzzFailure("policy: \(line.debugDescription) does not contain its own address") }
        }
    }
}

/// The requests a fuzzed policy is asked about.
struct PolicyProbe: CustomStringConvertible {
    static let bucket = "bkt"

    var action: String
    var resource: String
    var context: [String: [String]]
    var caller: BucketPolicy.Caller

    var description: String { "\(action) on \(resource) by \(caller) with \(context)" }

    func decide(_ policy: BucketPolicy) -> BucketPolicy.Decision {
        policy.evaluate(action: action, resource: resource, context: context, caller: caller)
    }

    static let contexts: [[String: [String]]] = [
        [:],
        ["aws:sourceip": ["10.1.2.3"], "aws:securetransport": ["false"], "aws:username": ["bob"],
         "aws:currenttime": ["2026-12-06T12:00:00Z"], "aws:epochtime": ["1796000000"], "s3:prefix": ["dir/"],
         "s3:max-keys": ["10"], "aws:referer": ["https://example.com/page"]],
        ["aws:sourceip": ["2001:db8::7"], "s3:requestobjecttagkeys": ["a", "b"], "aws:userid": ["AIDA*?"],
         "s3:x-amz-acl": ["public-read"], "aws:currenttime": ["1999-12-31"], "s3:signatureage": ["1e300"]],
    ]

    static let all: [PolicyProbe] = {
        var out: [PolicyProbe] = []
        for action in ["s3:GetObject", "s3:PutObject", "s3:ListBucket", "s3:DeleteObjectVersion"] {
            for resource in ["bkt", "bkt/a", "bkt/dir/x.txt", "bkt/${aws:username}"] {
                for context in contexts {
                    for caller in [BucketPolicy.Caller.anonymous, .account(accountID: "123456789012", canonicalID: "c0ffee")] {
                        out.append(PolicyProbe(action: action, resource: resource, context: context, caller: caller))
                    }
                }
            }
        }
        return out
    }()

    static let forms: [PostForm] = [
        PostForm([]),
        PostForm([("key", "uploads/${filename}"), ("Content-Type", "image/png, image/jpeg"), ("acl", "public-read"),
                  ("x-amz-meta-tag", "a"), ("X-Amz-Meta-Tag", "b"), ("success_action_status", "201"),
                  ("x-ignore-me", "1"), ("policy", "p"), ("x-amz-signature", "s")]),
    ]
}
