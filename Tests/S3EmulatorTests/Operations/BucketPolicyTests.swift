import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// PutBucketPolicy's validation (S3's MalformedPolicy messages), Get/Delete/Status, Block Public
/// Access, and the anonymous access a policy grants.
@Suite struct BucketPolicyTests {
    static func publicRead(_ bucket: String) -> String {
        #"{"Version":"2012-10-17","Statement":[{"Sid":"PublicRead","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::\#(bucket)/*"}]}"#
    }

    static func statement(_ fields: String) -> String {
        #"{"Version":"2012-10-17","Statement":[{\#(fields)}]}"#
    }

    static let allow = #""Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#

    @Test(arguments: [
        ("", "Policies must be valid JSON and the first byte must be '{'"),
        ("invalid json", "Policies must be valid JSON and the first byte must be '{'"),
        ("{\"Version\": ", "This policy contains invalid Json"),
        ("{}", "Missing required field Statement"),
        (#"{"Version":"2012-10-17","Statement":[]}"#, "Could not parse the policy: Statement is empty!"),
        (#"{"Version":"2013-01-01","Statement":[{\#(allow)}]}"#, "The policy must contain a valid version string"),
        (#"{"Version":"2012-10-17","Extra":1,"Statement":[{\#(allow)}]}"#, "Unknown field Extra"),
        (statement(#""Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#), "Missing required field Effect"),
        (statement(#""Effect":"Maybe","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#), "Invalid effect: Maybe"),
        (statement(#""Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#), "Missing required field Principal"),
        (statement(#""Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#), "Invalid principal in policy"),
        (statement(#""Effect":"Allow","Principal":{"Nobody":"x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#), "Invalid principal in policy"),
        (statement(#""Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::pol/*""#), "Missing required field Action"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:FlyAway","Resource":"arn:aws:s3:::pol/*""#), "Policy has invalid action"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"ec2:RunInstances","Resource":"arn:aws:s3:::pol/*""#), "Policy has invalid action"),
        (statement(#""Effect":"Allow","Principal":"*","Action":null,"Resource":"arn:aws:s3:::pol/*""#), "Invalid policy syntax."),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:GetObject""#), "Missing required field Resource"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*""#), "Policy has invalid resource"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*""#), "Policy has invalid resource"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol""#),
         "Action does not apply to any resource(s) in statement"),
        (statement(#""Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::pol/*""#),
         "Action does not apply to any resource(s) in statement"),
        (statement(#"\#(allow),"Condition":{"StringSorta":{"aws:Referer":"x"}}"#), "Invalid Condition type : StringSorta"),
        (statement(#"\#(allow),"Condition":{"StringEquals":{"s3:VersionStatus":"x"}}"#), "Policy has an invalid condition key"),
        (statement(#"\#(allow),"Condition":{"IpAddress":{"aws:SourceIp":"300.1.1.1"}}"#), "Invalid IP address in Conditions"),
        (#"{"Statement":[{\#(allow)}],"Statement":[]}"#, "Statement/policy already has instance of Statement"),
        (statement(#"\#(allow),"NotPrincipal":"*""#), "Statement/policy already has instance of Principal"),
        // Past a double's range: stored as `null`, the document would not parse again (fuzz target `policy`).
        (statement(#"\#(allow),"Condition":{"NumericLessThan":{"s3:max-keys":1e400}}"#), "Invalid policy syntax."),
        (statement(#"\#(allow),"Condition":{"NumericGreaterThan":{"s3:max-keys":[1,-1e999]}}"#), "Invalid policy syntax."),
    ])
    func malformedPolicies(document: String, message: String) throws {
        let s3 = try S3Harness()
        s3.makeBucket("pol")
        let r = s3.call("PUT", "/pol?policy", body: Array(document.utf8))
        #expect(r.status == 400)
        #expect(r.errorCode == "MalformedPolicy")
        #expect(r.xml?.childText("Message") == message)
        #expect(s3.call("GET", "/pol?policy").errorCode == "NoSuchBucketPolicy")
    }

    @Test func tooLargeAfterNormalizing() throws {
        let s3 = try S3Harness()
        s3.makeBucket("pol")
        let sids = (0..<400).map { #"{"Sid":"S\#($0)xxxxxxxxxxxxxxxxxxxxxxxx","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*"}"# }
        let r = s3.call("PUT", "/pol?policy", body: Array(#"{"Statement":[\#(sids.joined(separator: ","))]}"#.utf8))
        #expect(r.errorCode == "MalformedPolicy")
        #expect(r.xml?.childText("Message") == "Normalized policy document exceeds the maximum allowed size of 20480 bytes")
    }

    @Test func putGetStatusDelete() throws {
        let s3 = try S3Harness()
        s3.makeBucket("pol")
        #expect(s3.call("GET", "/pol?policyStatus").errorCode == "NoSuchBucketPolicy")
        let spaced = """
            {
              "Statement": [ { "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::pol/*",
                               "Principal": {"AWS": ["123456789012", "arn:aws:iam::210987654321:user/x"]}, "Effect": "Allow", "Sid": "a" } ],
              "Version": "2012-10-17"
            }
            """
        let put = s3.call("PUT", "/pol?policy", body: Array(spaced.utf8))
        #expect(put.status == 204)
        let got = s3.call("GET", "/pol?policy")
        #expect(got.status == 200)
        #expect(got.header("Content-Type") == "application/json")
        // S3's own serialization: compact, its element order, account ids as root ARNs.
        #expect(got.text == #"{"Version":"2012-10-17","Statement":[{"Sid":"a","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::123456789012:root","arn:aws:iam::210987654321:user/x"]},"Action":["s3:GetObject"],"Resource":"arn:aws:s3:::pol/*"}]}"#)
        let status = s3.call("GET", "/pol?policyStatus")
        #expect(status.xml?.name == "PolicyStatus")
        #expect(status.xml?.childText("IsPublic") == "false")
        #expect(s3.call("DELETE", "/pol?policy").status == 204)
        #expect(s3.call("DELETE", "/pol?policy").status == 204)
        #expect(s3.call("GET", "/pol?policy").errorCode == "NoSuchBucketPolicy")
        #expect(s3.call("PUT", "/nope?policy", body: Array(Self.publicRead("nope").utf8)).errorCode == "NoSuchBucket")
    }

    @Test func blockPublicPolicyRefusesAPublicPolicy() throws {
        let s3 = try S3Harness()
        s3.makeBucket("pol")
        let r = s3.call("PUT", "/pol?policy", body: Array(Self.publicRead("pol").utf8))
        #expect(r.status == 403)
        #expect(r.errorCode == "AccessDenied")
        #expect(r.xml?.childText("Message") == #"User: arn:aws:iam::000000000000:root is not authorized to perform: s3:PutBucketPolicy on resource: "arn:aws:s3:::pol" because public policies are blocked by the BlockPublicPolicy block public access setting."#)
        // A policy limited to a fixed source range is not public.
        let limited = Self.statement(#"\#(Self.allow),"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/24"}}"#)
        #expect(s3.call("PUT", "/pol?policy", body: Array(limited.utf8)).status == 204)
    }

    @Test(arguments: [
        (#""Effect":"Allow","Principal":"*""#, true),
        (#""Effect":"Allow","Principal":{"AWS":"*"}"#, true),
        (#""Effect":"Deny","Principal":"*""#, false),
        (#""Effect":"Allow","Principal":{"AWS":"123456789012"}"#, false),
        (#""Effect":"Allow","Principal":"*","Condition":{"StringEquals":{"aws:SourceVpce":"vpce-1"}}"#, false),
        (#""Effect":"Allow","Principal":"*","Condition":{"StringLike":{"aws:SourceVpce":"vpce-*"}}"#, true),
        (#""Effect":"Allow","Principal":"*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}"#, true),
        (#""Effect":"Allow","Principal":"*","Condition":{"StringEquals":{"aws:Referer":"https://a"}}"#, true),
    ])
    func publicStatus(fields: String, isPublic: Bool) throws {
        let document = Self.statement(#"\#(fields),"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*""#)
        let policy = try BucketPolicy.parse(Array(document.utf8), bucket: "pol").get()
        #expect(policy.isPublic == isPublic)
    }

    /// A bucket opened to the public the way setup scripts do it.
    func publicBucket() throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket("site")
        s3.put("site", "index.html", Array("<h1>hi</h1>".utf8))
        let off = "<PublicAccessBlockConfiguration><BlockPublicAcls>false</BlockPublicAcls><IgnorePublicAcls>false</IgnorePublicAcls><BlockPublicPolicy>false</BlockPublicPolicy><RestrictPublicBuckets>false</RestrictPublicBuckets></PublicAccessBlockConfiguration>"
        #expect(s3.call("PUT", "/site?publicAccessBlock", body: Array(off.utf8)).status == 200)
        #expect(s3.call("PUT", "/site?policy", body: Array(Self.publicRead("site").utf8)).status == 204)
        return s3
    }

    @Test func anonymousReadsWhatThePolicyAllows() throws {
        let s3 = try publicBucket()
        let get = s3.send(s3.request("GET", "/site/index.html", signed: false))
        #expect(get.status == 200)
        #expect(get.text == "<h1>hi</h1>")
        #expect(s3.send(s3.request("HEAD", "/site/index.html", signed: false)).status == 200)
        #expect(s3.call("GET", "/site?policyStatus").xml?.childText("IsPublic") == "true")
        // Nothing else: no listing, no writes, and a missing key is 403 without s3:ListBucket.
        for (method, target) in [("GET", "/site"), ("PUT", "/site/x"), ("DELETE", "/site/index.html"), ("GET", "/site/missing"), ("GET", "/")] {
            let r = s3.send(s3.request(method, target, signed: false))
            #expect(r.status == 403, "\(method) \(target)")
            #expect(r.errorCode == "AccessDenied", "\(method) \(target)")
        }
        #expect(s3.call("GET", "/site/index.html").status == 200)
    }

    /// A stored policy that no longer parses (an older Hearth's whose checks have since tightened,
    /// a damaged row) may hold a Deny, so it denies: every request but the owner's own to read,
    /// replace or delete the policy — reading it as "no policy" would fail open.
    @Test func anUnreadableStoredPolicyDenies() throws {
        let first = try publicBucket()
        try first.database.write { c in
            try c.run("UPDATE s3_bucket_config SET document = ? WHERE bucket = 'site' AND kind = ?",
                      [#"{"Statement":null"#, BucketConfigKind.policy.rawValue])
            #expect(c.changes == 1)
        }
        // A new service over the same file: no cached copy of the readable policy.
        let s3 = try S3Harness(database: first.database)
        #expect(s3.send(s3.request("GET", "/site/index.html", signed: false)).status == 403)
        #expect(s3.call("GET", "/site/index.html").errorCode == "AccessDenied")
        #expect(s3.call("PUT", "/site/other", body: Array("x".utf8)).errorCode == "AccessDenied")
        #expect(s3.call("GET", "/site?policy").status == 200)
        #expect(s3.call("DELETE", "/site?policy").status == 204)
        #expect(s3.call("GET", "/site/index.html").status == 200)
        #expect(s3.send(s3.request("GET", "/site/index.html", signed: false)).status == 403)
    }

    @Test func restrictPublicBucketsTurnsItOff() throws {
        let s3 = try publicBucket()
        let restrict = "<PublicAccessBlockConfiguration><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>"
        #expect(s3.call("PUT", "/site?publicAccessBlock", body: Array(restrict.utf8)).status == 200)
        #expect(s3.send(s3.request("GET", "/site/index.html", signed: false)).status == 403)
        #expect(s3.call("DELETE", "/site?publicAccessBlock").status == 204)
        #expect(s3.send(s3.request("GET", "/site/index.html", signed: false)).status == 200)
    }

    @Test func denyWinsAndConditionsApply() throws {
        let s3 = try publicBucket()
        let document = #"""
            {"Version":"2012-10-17","Statement":[
              {"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:ListBucket","s3:PutObject"],"Resource":["arn:aws:s3:::site","arn:aws:s3:::site/*"]},
              {"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/private/*"},
              {"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringNotEquals":{"s3:x-amz-acl":"bucket-owner-full-control"}}}
            ]}
            """#
        #expect(s3.call("PUT", "/site?policy", body: Array(document.utf8)).status == 204)
        s3.put("site", "private/secret", Array("s".utf8))
        #expect(s3.send(s3.request("GET", "/site/private/secret", signed: false)).status == 403)
        // With s3:ListBucket a missing key is a 404 again.
        #expect(s3.send(s3.request("GET", "/site/missing", signed: false)).errorCode == "NoSuchKey")
        #expect(s3.send(s3.request("GET", "/site?list-type=2", signed: false)).status == 200)
        let refused = s3.send(s3.request("PUT", "/site/up.txt", body: Array("x".utf8), signed: false))
        #expect(refused.status == 403)
        let allowed = s3.send(s3.request("PUT", "/site/up.txt", headers: [("x-amz-acl", "bucket-owner-full-control")],
                                         body: Array("x".utf8), signed: false))
        #expect(allowed.status == 200)
        #expect(s3.call("GET", "/site/up.txt").text == "x")
    }

    @Test(arguments: [
        ("s3:Get*", "s3:GetObject", true), ("s3:get?bject", "s3:GetObject", true), ("*", "s3:PutObject", true),
        ("s3:GetObject", "s3:GetObjectVersion", false),
    ])
    func actionPatterns(pattern: String, action: String, matches: Bool) throws {
        let document = Self.statement(#""Effect":"Allow","Principal":"*","Action":"\#(pattern)","Resource":"arn:aws:s3:::pol/*""#)
        let policy = try BucketPolicy.parse(Array(document.utf8), bucket: "pol").get()
        #expect((policy.evaluate(action: action, resource: "pol/k", context: [:]) == .allow) == matches)
    }

    @Test(arguments: [
        ("IpAddress", "aws:SourceIp", "10.1.0.0/16", "10.1.2.3", true),
        ("IpAddress", "aws:SourceIp", "10.1.0.0/16", "10.2.2.3", false),
        ("NotIpAddress", "aws:SourceIp", "10.1.0.0/16", "10.2.2.3", true),
        ("IpAddress", "aws:SourceIp", "2001:db8::/32", "2001:db8::1", true),
        ("StringLike", "aws:Referer", "https://*.example.com/*", "https://www.example.com/a", true),
        ("StringEquals", "aws:Referer", "https://a", "https://b", false),
        ("StringNotEquals", "aws:Referer", "https://a", "", true),
        ("StringEqualsIfExists", "aws:Referer", "https://a", "", true),
        ("Bool", "aws:SecureTransport", "false", "false", true),
        ("NumericLessThan", "s3:max-keys", "10", "5", true),
        ("DateLessThan", "aws:CurrentTime", "2030-01-01T00:00:00Z", "2026-11-30T06:33:14Z", true),
    ])
    func conditions(op: String, key: String, expected: String, actual: String, holds: Bool) throws {
        let document = Self.statement(#"\#(Self.allow),"Condition":{"\#(op)":{"\#(key)":"\#(expected)"}}"#)
        let policy = try BucketPolicy.parse(Array(document.utf8), bucket: "pol").get()
        let context = actual.isEmpty ? [:] : [key.lowercased(): [actual]]
        #expect((policy.evaluate(action: "s3:GetObject", resource: "pol/k", context: context) == .allow) == holds)
    }

    @Test func policyGoesWithItsBucket() throws {
        let s3 = try publicBucket()
        #expect(s3.call("DELETE", "/site/index.html").status == 204)
        #expect(s3.call("DELETE", "/site").status == 204)
        s3.makeBucket("site")
        #expect(s3.call("GET", "/site?policy").errorCode == "NoSuchBucketPolicy")
        #expect(s3.call("GET", "/site?publicAccessBlock").xml?.childText("BlockPublicPolicy") == "true")
    }

    @Test func anonymousBatchDeleteIsJudgedKeyByKey() throws {
        let s3 = try publicBucket()
        s3.put("site", "tmp/a", [1])
        let document = Self.statement(#""Effect":"Allow","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::site/tmp/*""#)
        #expect(s3.call("PUT", "/site?policy", body: Array(document.utf8)).status == 204)
        let body = Array("<Delete><Object><Key>tmp/a</Key></Object><Object><Key>index.html</Key></Object></Delete>".utf8)
        let r = s3.send(s3.request("POST", "/site?delete", headers: [("Content-MD5", S3Harness.base64MD5(body))], body: body, signed: false))
        #expect(r.status == 200)
        #expect(r.xml?.child("Deleted")?.childText("Key") == "tmp/a")
        #expect(r.xml?.child("Error")?.childText("Key") == "index.html")
        #expect(r.xml?.child("Error")?.childText("Code") == "AccessDenied")
        #expect(s3.call("GET", "/site/index.html").status == 200)
        #expect(s3.call("GET", "/site/tmp/a").status == 404)
    }

    @Test func anonymousFormUploadWherePutObjectIsPublic() throws {
        let s3 = try publicBucket()
        var form = PostFormBuilder()
        form.fields = [("key", "drop/${filename}")]
        #expect(s3.send(form.request(bucket: "site")).errorCode == "AccessDenied")
        let document = Self.statement(#""Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/drop/*""#)
        #expect(s3.call("PUT", "/site?policy", body: Array(document.utf8)).status == 204)
        #expect(s3.send(form.request(bucket: "site")).status == 204)
        #expect(s3.call("GET", "/site/drop/hello.txt").text == "hello form")
        form.fields = [("key", "elsewhere/x")]
        #expect(s3.send(form.request(bucket: "site")).errorCode == "AccessDenied")
    }
}
