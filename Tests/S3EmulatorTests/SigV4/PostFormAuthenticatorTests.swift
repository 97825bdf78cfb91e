import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

/// Form signatures: the AWS documentation's vector, each malformed field with S3's error, and the
/// diagnosis of the ways clients sign policies wrongly.
@Suite struct PostFormAuthenticatorTests {
    static let exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    /// "Example: Browser-Based Upload using HTTP POST (Using AWS Signature Version 4)".
    static let examplePolicy =
        "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9"
    static let exampleSignature = "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"

    static func authenticator(keys: [S3Credentials.Key] = [S3Credentials.Key(accessKey: "AKIAIOSFODNN7EXAMPLE", secret: exampleSecret)],
                              region: String = "us-east-1", allowSigV2: Bool = false) -> PostFormAuthenticator {
        PostFormAuthenticator(credentials: S3Credentials(keys), region: region, signingKeys: SigningKeyCache(), allowSigV2: allowSigV2)
    }

    static func exampleForm(replacing changes: [String: String?] = [:]) -> PostForm {
        var fields: [(String, String)] = [
            ("key", "user/user1/${filename}"), ("X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"),
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Date", "20151229T000000Z"), ("Policy", examplePolicy),
            ("X-Amz-Signature", exampleSignature),
        ]
        for (name, value) in changes {
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            if let value { fields.append((name, value)) }
        }
        return PostForm(fields)
    }

    @Test func theDocumentationExampleVerifies() {
        let result = Self.authenticator().authenticate(Self.exampleForm(), bucket: "sigv4examplebucket")
        #expect((try? result.get()) == .signed(accessKey: "AKIAIOSFODNN7EXAMPLE", policy: Self.examplePolicy, sigV2: false))
    }

    @Test(arguments: [
        (["X-Amz-Signature": nil], "InvalidArgument", "Bucket POST must contain a field named 'X-Amz-Signature'.  If it is specified, please check the order of the fields."),
        (["X-Amz-Algorithm": nil], "InvalidArgument", "Bucket POST must contain a field named 'X-Amz-Algorithm'.  If it is specified, please check the order of the fields."),
        (["X-Amz-Credential": nil], "InvalidArgument", "Bucket POST must contain a field named 'X-Amz-Credential'.  If it is specified, please check the order of the fields."),
        (["X-Amz-Date": nil], "InvalidArgument", "Bucket POST must contain a field named 'X-Amz-Date'.  If it is specified, please check the order of the fields."),
        (["Policy": nil], "InvalidArgument", "Bucket POST must contain a field named 'policy'.  If it is specified, please check the order of the fields."),
        (["X-Amz-Algorithm": "AWS4-HMAC-SHA1"], "AuthorizationQueryParametersError", "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\""),
        (["X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/us-east-1/s3/aws4_request"], "AuthorizationQueryParametersError",
         "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\"."),
        (["X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20151229/eu-west-1/s3/aws4_request"], "AuthorizationQueryParametersError",
         "Error parsing the X-Amz-Credential parameter; the region 'eu-west-1' is wrong; expecting 'us-east-1'"),
        (["X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/ec2/aws4_request"], "AuthorizationQueryParametersError",
         "Error parsing the X-Amz-Credential parameter; incorrect service \"ec2\". This endpoint belongs to \"s3\"."),
        (["X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20151230/us-east-1/s3/aws4_request"], "AuthorizationQueryParametersError",
         "Invalid credential date \"20151230\". This date is not the same as X-Amz-Date: \"20151229\"."),
        (["X-Amz-Date": "2015-12-29T00:00:00Z"], "AuthorizationQueryParametersError",
         "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\""),
        (["X-Amz-Credential": "AKIAUNKNOWN/20151229/us-east-1/s3/aws4_request"], "InvalidAccessKeyId",
         "The AWS Access Key Id you provided does not exist in our records."),
        (["X-Amz-Signature": String(repeating: "0", count: 64)], "SignatureDoesNotMatch",
         "The request signature we calculated does not match the signature you provided. Check your key and signing method."),
        (["X-Amz-Signature": nil, "X-Amz-Algorithm": nil, "X-Amz-Credential": nil, "X-Amz-Date": nil], "AccessDenied", "Access Denied"),
        (["X-Amz-Signature": nil, "X-Amz-Algorithm": nil, "X-Amz-Credential": nil, "X-Amz-Date": nil, "AWSAccessKeyId": "AKIAIOSFODNN7EXAMPLE",
          "signature": "c2ln"], "InvalidRequest", "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."),
    ] as [([String: String?], String, String)])
    func failures(changes: [String: String?], code: String, message: String) {
        let result = Self.authenticator().authenticate(Self.exampleForm(replacing: changes), bucket: "sigv4examplebucket")
        guard case .failure(let error) = result else {
            Issue.record("expected \(code), got \(result)")
            return
        }
        #expect(error.code == code)
        #expect(error.message == message)
    }

    @Test func aMismatchShowsThePolicyAsTheStringToSign() throws {
        let result = Self.authenticator().authenticate(Self.exampleForm(replacing: ["X-Amz-Signature": String(repeating: "a", count: 64)]),
                                                       bucket: "sigv4examplebucket")
        guard case .failure(let error) = result else { throw CancellationError() }
        let fields = Dictionary(uniqueKeysWithValues: error.details)
        #expect(fields["AWSAccessKeyId"] == "AKIAIOSFODNN7EXAMPLE")
        #expect(fields["StringToSign"] == Self.examplePolicy)
        #expect(fields["SignatureProvided"] == String(repeating: "a", count: 64))
        #expect(fields["StringToSignBytes"]?.hasPrefix("65 79 41 69") == true)
        #expect(fields["CanonicalRequest"] == nil)
        #expect(error.diagnosis?.contains("most likely the secret key") == true)
    }

    @Test func aKeyLimitedToOtherBucketsIsRefused() {
        let keys = [S3Credentials.Key(accessKey: "AKIAIOSFODNN7EXAMPLE", secret: Self.exampleSecret, allowedBuckets: ["other"])]
        let result = Self.authenticator(keys: keys).authenticate(Self.exampleForm(), bucket: "sigv4examplebucket")
        guard case .failure(let error) = result else {
            Issue.record("expected AccessDenied")
            return
        }
        #expect(error.code == "AccessDenied")
    }

    @Test func sigV2FormsVerifyWhenAllowed() {
        let policy = Self.examplePolicy
        let good = SigV2.signature(secret: Self.exampleSecret, stringToSign: policy)
        let form = PostForm([("key", "k"), ("AWSAccessKeyId", "AKIAIOSFODNN7EXAMPLE"), ("policy", policy), ("signature", good)])
        #expect((try? Self.authenticator(allowSigV2: true).authenticate(form, bucket: "b").get())
            == .signed(accessKey: "AKIAIOSFODNN7EXAMPLE", policy: policy, sigV2: true))
        let bad = PostForm([("key", "k"), ("AWSAccessKeyId", "AKIAIOSFODNN7EXAMPLE"), ("policy", policy), ("signature", "AAAA")])
        guard case .failure(let error) = Self.authenticator(allowSigV2: true).authenticate(bad, bucket: "b") else {
            Issue.record("expected SignatureDoesNotMatch")
            return
        }
        #expect(error.code == "SignatureDoesNotMatch")
    }

    @Test func anUnsignedFormIsUnsigned() {
        #expect((try? Self.authenticator().authenticate(PostForm([("key", "k")]), bucket: "b").get()) == .unsigned)
    }

    // MARK: Diagnosis

    static let policy = Data(#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [{"bucket": "b"}]}"#.utf8).base64EncodedString()

    static func form(signature: String) -> PostForm {
        PostForm([("key", "k"), ("x-amz-algorithm", "AWS4-HMAC-SHA256"), ("x-amz-credential", "test/20261130/us-east-1/s3/aws4_request"),
                  ("x-amz-date", "20261130T063314Z"), ("policy", policy), ("x-amz-signature", signature)])
    }

    static func hmacHex(_ key: [UInt8], _ data: [UInt8]) -> String { SigningKey.sign(key, data) }

    @Test(arguments: [
        ("other secret", hmacHex(SigningKey.derive(secret: "other-secret", date: "20261130", region: "us-east-1", service: "s3"), Array(policy.utf8)),
         "secret of access key 'other'"),
        ("other region", hmacHex(SigningKey.derive(secret: "test", date: "20261130", region: "eu-west-1", service: "s3"), Array(policy.utf8)),
         "derived for region 'eu-west-1'"),
        ("other date", hmacHex(SigningKey.derive(secret: "test", date: "20261129", region: "us-east-1", service: "s3"), Array(policy.utf8)),
         "derived for the date 20261129"),
        ("json", hmacHex(SigningKey.derive(secret: "test", date: "20261130", region: "us-east-1", service: "s3"),
                         [UInt8](Data(base64Encoded: policy)!)), "policy's JSON"),
        ("raw secret", hmacHex(Array("test".utf8), Array(policy.utf8)), "secret itself"),
        ("sigv2", Hex.encode(HMAC.sha1(key: Array("test".utf8), data: Array(policy.utf8))), "SigV2's HMAC-SHA1"),
        ("base64", Data(Hex.decode(hmacHex(SigningKey.derive(secret: "test", date: "20261130", region: "us-east-1", service: "s3"),
                                           Array(policy.utf8))) ?? []).base64EncodedString(), "base64-encoded"),
    ])
    func diagnoses(_ name: String, signature: String, expected: String) {
        let keys = [S3Credentials.Key(accessKey: "test", secret: "test"), S3Credentials.Key(accessKey: "other", secret: "other-secret")]
        let result = Self.authenticator(keys: keys).authenticate(Self.form(signature: signature), bucket: "b")
        guard case .failure(let error) = result else {
            Issue.record("\(name): expected a mismatch")
            return
        }
        #expect(error.code == "SignatureDoesNotMatch")
        #expect(error.diagnosis?.contains(expected) == true, "\(name): \(error.diagnosis ?? "none")")
    }
}
