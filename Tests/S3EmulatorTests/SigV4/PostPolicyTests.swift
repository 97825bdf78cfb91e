import Foundation
import HearthCore
import Testing
@testable import S3Emulator

/// The POST policy document: parsing with S3's "Invalid Policy" messages, expiration, and the
/// condition matching of "POST Policy" (exact, starts-with, any content, Content-Type lists,
/// extra input fields).
@Suite struct PostPolicyTests {
    static func encode(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

    static func policy(_ conditions: String, expiration: String = "2030-01-01T00:00:00Z") throws -> PostPolicy {
        try PostPolicy.parse(base64: encode("{\"expiration\": \"\(expiration)\", \"conditions\": [\(conditions)]}"))
    }

    @Test(arguments: [
        ("{policy}", "Invalid JSON."),
        (encode("expiration"), "Invalid JSON."),
        (encode("[]"), "Invalid JSON."),
        ("", "Expecting '{' but found End-of-Input"),
        (encode("{\"conditions\": []}"), "Policy missing expiration."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\"}"), "Policy missing conditions."),
        (encode("{\"EXPIRATION\": \"2030-01-01T00:00:00Z\", \"conditions\": []}"), "Policy missing expiration."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": {}}"), "Invalid 'conditions' value: must be a List."),
        (encode("{\"expiration\": 32503680000, \"conditions\": []}"), "Invalid 'expiration' value: '32503680000'"),
        (encode("{\"expiration\": \"2030-01-01 00:00:00\", \"conditions\": []}"), "Invalid 'expiration' value: '2030-01-01 00:00:00'"),
        (encode("{\"expiration\": \"2030-01-01T00:00:00+00:00\", \"conditions\": []}"),
         "Invalid 'expiration' value: '2030-01-01T00:00:00+00:00'"),
        (encode("{\"expiration\": \"2030-02-30T00:00:00Z\", \"conditions\": []}"), "Invalid 'expiration' value: '2030-02-30T00:00:00Z'"),
        (encode("{\"expiration\": \"tomorrow\", \"conditions\": []}"), "Invalid 'expiration' value: 'tomorrow'"),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [{}]}"),
         "Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [{\"acl\": \"a\", \"key\": \"k\"}]}"),
         "Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [{\"acl\": 1}]}"),
         "Invalid Simple-Condition: value must be a string."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [\"bucket\"]}"),
         "Invalid condition test: must be a List or Object."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[]]}"), "Invalid Condition: missing operation identifier."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[\"eq\", \"$key\"]]}"), "Invalid eq: wrong number of arguments."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[\"ends-with\", \"$key\", \"x\"]]}"),
         "Invalid Condition: unknown operation 'ends-with'."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[\"content-length-range\", 0]]}"),
         "Invalid content-length-range: wrong number of arguments."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[\"content-length-range\", -1, 0]]}"),
         "Invalid content-length-range: the range must be two non-negative integers."),
        (encode("{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": [[\"content-length-range\", 0, \"x\"]]}"),
         "Invalid content-length-range: the range must be two non-negative integers."),
    ])
    func invalidDocuments(encoded: String, detail: String) {
        #expect(throws: PostPolicyFailure.invalidPolicy(detail: detail)) { try PostPolicy.parse(base64: encoded) }
    }

    @Test func theDocumentExampleParses() throws {
        let p = try Self.policy("""
            {"bucket": "b"}, ["starts-with", "$key", "user/"], ["StArTs-WiTh", "$Content-Type", "image/"],
            ["eq", "$acl", "private"], ["content-length-range", 1, "10485760"]
            """, expiration: "2015-12-30T12:00:00.000Z")
        #expect(p.expiration == Instant(rfc3339: "2015-12-30T12:00:00Z"))
        #expect(p.conditions == [
            .equals(field: "$bucket", value: "b"), .startsWith(field: "$key", prefix: "user/"),
            .startsWith(field: "$Content-Type", prefix: "image/"), .equals(field: "$acl", value: "private"),
            .contentLengthRange(min: 1, max: 10_485_760),
        ])
        #expect(p.lengthRanges.map { [$0.min, $0.max] } == [[1, 10_485_760]])
    }

    @Test(arguments: [
        ("2030-01-01T00:00:00Z", "2030-01-01T00:00:00Z"),
        ("2030-01-01T00:00:00.5Z", "2030-01-01T00:00:00.500000Z"),
        ("2030-01-01T00:00:00.123456789Z", "2030-01-01T00:00:00.123456Z"),
        ("2024-02-29T23:59:59Z", "2024-02-29T23:59:59Z"),
    ])
    func expirations(text: String, expected: String) {
        #expect(PostPolicy.parseExpiration(text)?.rfc3339(fractionDigits: 6) == Instant(rfc3339: expected)?.rfc3339(fractionDigits: 6))
    }

    @Test(arguments: ["2030-01-01T00:00:00", "2030-01-01T00:00:00.Z", "2030-1-01T00:00:00Z", "2023-02-29T00:00:00Z", "2030-01-01T24:00:00Z"])
    func badExpirations(text: String) {
        #expect(PostPolicy.parseExpiration(text) == nil)
    }

    static let form = PostForm([
        ("key", "user/eric/photo.jpg"), ("Content-Type", "image/jpeg"), ("acl", "private"),
        ("x-amz-meta-tag", "Ninja"), ("X-AMZ-META-TAG", "Stallman"), ("x-ignore-me", "1"),
    ])

    /// Each condition on its own against `form` (every other field covered), with S3's rendering.
    @Test(arguments: [
        ("[\"eq\", \"$key\", \"user/eric/photo.jpg\"]", nil),
        ("{\"KEY\": \"user/eric/photo.jpg\"}", nil),
        ("[\"eq\", \"$key\", \"user/eric/other.jpg\"]", "[\"eq\", \"$key\", \"user/eric/other.jpg\"]"),
        ("{\"acl\": \"public-read\"}", "[\"eq\", \"$acl\", \"public-read\"]"),
        ("{\"Key\": \"USER/eric/photo.jpg\"}", "[\"eq\", \"$Key\", \"USER/eric/photo.jpg\"]"),
        ("[\"eq\", \"key\", \"user/eric/photo.jpg\"]", "[\"eq\", \"key\", \"user/eric/photo.jpg\"]"),
        ("{\"success_action_status\": \"201\"}", "[\"eq\", \"$success_action_status\", \"201\"]"),
        ("{\"success_action_status\": \"\"}", nil),
        ("[\"starts-with\", \"$key\", \"user/eric/\"]", nil),
        ("[\"starts-with\", \"$key\", \"user/betty/\"]", "[\"starts-with\", \"$key\", \"user/betty/\"]"),
        ("[\"starts-with\", \"$success_action_redirect\", \"\"]", nil),
        ("[\"starts-with\", \"$Content-Type\", \"image/\"]", nil),
        ("[\"starts-with\", \"$Content-Type\", \"text/\"]", "[\"starts-with\", \"$Content-Type\", \"text/\"]"),
        ("{\"x-amz-meta-tag\": \"Ninja,Stallman\"}", nil),
        ("{\"bucket\": \"photos\"}", nil),
        ("{\"bucket\": \"other\"}", "[\"eq\", \"$bucket\", \"other\"]"),
        ("[\"eq\", \"$key\", \"quote\\\"d\"]", "[\"eq\", \"$key\", \"quote\\\"d\"]"),
    ] as [(String, String?)])
    func conditions(condition: String, failed: String?) throws {
        let cover = #"["starts-with", "$key", ""], ["starts-with", "$content-type", ""], ["starts-with", "$acl", ""], ["starts-with", "$x-amz-meta-tag", ""], {"bucket": "photos"}"#
        let p = try Self.policy(cover + ", " + condition)
        let result = p.check(Self.form, bucket: "photos", exempt: ["x-amz-signature", "file", "policy"])
        if let failed {
            guard case .conditionFailed(let rendered, let diagnosis)? = result else {
                Issue.record("expected a failed condition, got \(String(describing: result))")
                return
            }
            #expect(rendered == failed)
            #expect(!diagnosis.isEmpty)
        } else {
            #expect(result == nil)
        }
    }

    /// Conditions compare bytes, as S3 does: a key canonically equivalent to the one the policy
    /// allows (U+212A KELVIN SIGN for `K`, U+212B ANGSTROM SIGN for `Å`) is another key, stored
    /// under other bytes, and fails `eq` and `starts-with` (`String`'s comparison let it through).
    @Test(arguments: [
        (#"{"key": "users/Kim/photo.jpg"}"#, "users/\u{212A}im/photo.jpg"),
        (#"["starts-with", "$key", "users/Kim/"]"#, "users/\u{212A}im/photo.jpg"),
        (#"["eq", "$key", "caf\u00e9"]"#, "cafe\u{301}"),
        (#"["starts-with", "$key", "\u00c5/"]"#, "\u{212B}/x"),
    ])
    func conditionsCompareBytes(condition: String, key: String) throws {
        let p = try Self.policy(#"{"bucket": "b"}, "# + condition)
        let result = p.check(PostForm([("key", key)]), bucket: "b", exempt: [])
        guard case .conditionFailed? = result else {
            Issue.record("\(condition) let \(key.unicodeScalars.map { String($0.value, radix: 16) }) through: \(String(describing: result))")
            return
        }
    }

    @Test(arguments: [
        ("image/png, image/gif", true),
        ("image/png,image/gif", true),
        ("image/png,text/html", false),
        ("text/html", false),
    ])
    func contentTypeListsNeedThePrefixOnEachType(value: String, allowed: Bool) throws {
        let p = try Self.policy(#"{"bucket": "b"}, ["starts-with", "$Content-Type", "image/"]"#)
        let result = p.check(PostForm([("Content-Type", value)]), bucket: "b", exempt: [])
        #expect((result == nil) == allowed)
    }

    @Test(arguments: [
        ([("key", "k"), ("Expires", "0")], #"{"bucket": "b"}, {"key": "k"}"#, ["expires"]),
        ([("key", "k")], #"{"key": "k"}"#, ["bucket"]),
        ([("key", "k"), ("X-Ignore-Me", "1"), ("policy", "p"), ("x-amz-signature", "s"), ("file", "f")], #"{"bucket": "b"}, {"key": "k"}"#, []),
        ([("key", "k"), ("acl", "private"), ("tagging", "<Tagging/>")], #"{"bucket": "b"}"#, ["key", "acl", "tagging"]),
        ([("key", "k"), ("acl", "private")], #"{"bucket": "b"}, ["starts-with", "$KEY", ""], ["starts-with", "$ACL", "p"]"#, []),
    ] as [([(String, String)], String, [String])])
    func extraInputFields(fields: [(String, String)], conditions: String, extra: [String]) throws {
        let p = try Self.policy(conditions)
        let result = p.check(PostForm(fields), bucket: "b", exempt: ["x-amz-signature", "file", "policy"])
        #expect(result == (extra.isEmpty ? nil : .extraFields(extra)))
    }

    @Test func messages() {
        #expect(PostPolicyFailure.extraFields(["acl", "key"]).message == "Invalid according to Policy: Extra input fields: acl, key")
        #expect(PostPolicyFailure.conditionFailed(condition: "[\"eq\", \"$acl\", \"x\"]", diagnosis: "").message
            == "Invalid according to Policy: Policy Condition failed: [\"eq\", \"$acl\", \"x\"]")
        #expect(PostPolicyFailure.expired(expiration: "x", serverTime: Instant(unixSeconds: 0)).message
            == "Invalid according to Policy: Policy expired.")
        #expect(PostPolicyFailure.missingField(name: "key").message
            == "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
    }

    @Test func filenameSubstitution() {
        var form = PostForm([("key", "in/${filename}"), ("x-amz-meta-names", "${filename},${filename}"), ("policy", "${filename}")])
        form.substituteFilename("C:\\Users\\me\\report.pdf")
        #expect(form["key"] == "in/report.pdf")
        #expect(form["x-amz-meta-names"] == "report.pdf,report.pdf")
        #expect(form["policy"] == "${filename}")
        var none = PostForm([("key", "in/${filename}")])
        none.substituteFilename(nil)
        #expect(none["key"] == "in/")
        #expect(PostForm.baseName("a/b\\c.txt") == "c.txt")
    }
}
