import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

/// Lifecycle, encryption, public access block, ownership controls and bucket tagging: validation
/// as S3 answers it, round trips, defaults, and their going with the bucket.
@Suite struct BucketConfigTests {
    /// A PUT with the Content-MD5 S3 wants for configuration documents.
    func put(_ s3: S3Harness, _ target: String, _ document: String, headers: [(String, String)] = []) -> S3TestResponse {
        let body = Array(document.utf8)
        return s3.call("PUT", target, headers: [("Content-MD5", S3Harness.base64MD5(body))] + headers, body: body)
    }

    static func lifecycle(_ rules: String) -> String {
        #"<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\#(rules)</LifecycleConfiguration>"#
    }

    // MARK: Lifecycle

    @Test func lifecycleRoundTrip() throws {
        let s3 = try S3Harness()
        s3.makeBucket("lcy")
        #expect(s3.call("GET", "/lcy?lifecycle").errorCode == "NoSuchLifecycleConfiguration")
        let document = Self.lifecycle("""
            <Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>
              <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>
              <Expiration><Days>365</Days></Expiration></Rule>
            <Rule><Status>Disabled</Status><Filter><And><Prefix>tmp/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter>
              <NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
            <Rule><ID>uploads</ID><Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>
              <Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration></Rule>
            """)
        let r = put(s3, "/lcy?lifecycle", document)
        #expect(r.status == 200)
        #expect(r.header("x-amz-transition-default-minimum-object-size") == "all_storage_classes_128K")
        let got = s3.call("GET", "/lcy?lifecycle")
        #expect(got.header("x-amz-transition-default-minimum-object-size") == "all_storage_classes_128K")
        let rules = try #require(got.xml).children(named: "Rule")
        #expect(rules.count == 3)
        #expect(rules[0].childText("ID") == "logs")
        #expect(rules[0].child("Filter")?.childText("Prefix") == "logs/")
        #expect(rules[0].child("Transition")?.childText("StorageClass") == "STANDARD_IA")
        #expect(rules[0].child("Expiration")?.childText("Days") == "365")
        // A rule without an ID gets one: the base64 of a UUID, 48 characters, as S3 makes it.
        let generated = try #require(rules[1].childText("ID"))
        #expect(generated.count == 48)
        #expect(Data(base64Encoded: generated).flatMap { String(data: $0, encoding: .utf8) }.map { UUID(uuidString: $0) != nil } == true)
        #expect(rules[1].child("Filter")?.child("And")?.child("Tag")?.childText("Key") == "k")
        #expect(rules[1].child("NoncurrentVersionExpiration")?.childText("NewerNoncurrentVersions") == "2")
        #expect(rules[2].child("Filter")?.children.isEmpty == true)
        #expect(rules[2].child("Expiration")?.childText("Date") == "2030-01-01T00:00:00.000Z")
        #expect(got.text.contains("<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"))
        #expect(s3.call("DELETE", "/lcy?lifecycle").status == 204)
        #expect(s3.call("DELETE", "/lcy?lifecycle").status == 204)
        #expect(s3.call("GET", "/lcy?lifecycle").errorCode == "NoSuchLifecycleConfiguration")
    }

    @Test func lifecycleNeedsAnIntegrityHeader() throws {
        let s3 = try S3Harness()
        s3.makeBucket("lcy")
        let document = Self.lifecycle("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>")
        let r = s3.call("PUT", "/lcy?lifecycle", body: Array(document.utf8))
        #expect(r.errorCode == "InvalidRequest")
        #expect(r.xml?.childText("Message") == "Missing required header for this request: Content-MD5")
        let minimum = put(s3, "/lcy?lifecycle", document, headers: [("x-amz-transition-default-minimum-object-size", "varies_by_storage_class")])
        #expect(minimum.header("x-amz-transition-default-minimum-object-size") == "varies_by_storage_class")
        let bad = put(s3, "/lcy?lifecycle", document, headers: [("x-amz-transition-default-minimum-object-size", "tiny")])
        #expect(bad.xml?.childText("Message") == "Invalid TransitionDefaultMinimumObjectSize found: tiny")
    }

    @Test(arguments: [
        ("", "MalformedXML", nil),
        ("<Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>", "MalformedXML", nil),
        ("<Rule><ID>a</ID><Filter/><Status>enabled</Status><Expiration><Days>1</Days></Expiration></Rule>", "MalformedXML", nil),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>",
         "MalformedXML", nil),
        ("<Rule><ID>a</ID><Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "MalformedXML", nil),
        ("<Rule><ID>a</ID><Filter><And><Prefix>a</Prefix></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "MalformedXML", nil),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule>",
         "InvalidArgument", "'Days' for Expiration action must be a positive integer"),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T10:00:00Z</Date></Expiration></Rule>",
         "InvalidArgument", "'Date' must be at midnight GMT"),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status></Rule>", "InvalidRequest", "At least one action needs to be specified in a rule"),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>",
         "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"),
        ("<Rule><ID>\(String(repeating: "x", count: 256))</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "InvalidArgument", "ID length should not exceed allowed limit of 255"),
        ("<Rule><ID>a</ID><Filter><And><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "InvalidRequest", "Duplicate Tag Keys are not allowed."),
        ("<Rule><ID>a</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>",
         "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Transition><Days>10</Days><StorageClass>STANDARD_IA</StorageClass></Transition></Rule>",
         "InvalidArgument", "'Days' in Transition action must be greater than or equal to 30 for storageClass 'STANDARD_IA'"),
        ("<Rule><ID>a</ID><Filter><ObjectSizeLessThan>0</ObjectSizeLessThan></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "InvalidRequest", "'ObjectSizeLessThan' should be between 1 and 1099511627776000."),
        ("<Rule><ID>a</ID><Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "InvalidRequest", "'ObjectSizeLessThan' has to be a value greater than 'ObjectSizeGreaterThan'."),
        ("<Rule><ID>a</ID><Prefix>a</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>b</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
         "InvalidRequest", "Filter element can only be used in Lifecycle V2."),
        ("<Rule><ID>a</ID><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration></Rule>",
         "InvalidArgument", "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"),
    ] as [(String, String, String?)])
    func lifecycleRefusals(rules: String, code: String, message: String?) throws {
        let s3 = try S3Harness()
        s3.makeBucket("lcy")
        let r = put(s3, "/lcy?lifecycle", Self.lifecycle(rules))
        #expect(r.status == 400)
        #expect(r.errorCode == code)
        if let message { #expect(r.xml?.childText("Message") == message) }
        #expect(s3.call("GET", "/lcy?lifecycle").errorCode == "NoSuchLifecycleConfiguration")
    }

    // MARK: Encryption

    @Test func encryptionDefaultsPutsAndResets() throws {
        let s3 = try S3Harness()
        s3.makeBucket("enc")
        #expect(s3.call("GET", "/enc?encryption").xml?.child("Rule")?.child("ApplyServerSideEncryptionByDefault")?.childText("SSEAlgorithm") == "AES256")
        let kms = """
            <ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm>\
            <KMSMasterKeyID>arn:aws:kms:us-east-1:000000000000:key/abc</KMSMasterKeyID></ApplyServerSideEncryptionByDefault>\
            <BucketKeyEnabled>true</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>
            """
        #expect(put(s3, "/enc?encryption", kms).status == 200)
        let rule = s3.call("GET", "/enc?encryption").xml?.child("Rule")
        #expect(rule?.child("ApplyServerSideEncryptionByDefault")?.childText("SSEAlgorithm") == "aws:kms")
        #expect(rule?.child("ApplyServerSideEncryptionByDefault")?.childText("KMSMasterKeyID") == "arn:aws:kms:us-east-1:000000000000:key/abc")
        #expect(rule?.childText("BucketKeyEnabled") == "true")
        // DeleteBucketEncryption resets to SSE-S3, as S3 does since 2023.
        #expect(s3.call("DELETE", "/enc?encryption").status == 204)
        #expect(s3.call("GET", "/enc?encryption").xml?.child("Rule")?.child("ApplyServerSideEncryptionByDefault")?.childText("SSEAlgorithm") == "AES256")
    }

    @Test(arguments: [
        ("<ServerSideEncryptionConfiguration/>", "MalformedXML"),
        ("<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES512</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>", "MalformedXML"),
        ("<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>", "MalformedXML"),
        ("<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm><KMSMasterKeyID>k</KMSMasterKeyID></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>", "InvalidArgument"),
    ])
    func encryptionRefusals(document: String, code: String) throws {
        let s3 = try S3Harness()
        s3.makeBucket("enc")
        let r = put(s3, "/enc?encryption", document)
        #expect(r.status == 400)
        #expect(r.errorCode == code)
        if code == "InvalidArgument" {
            #expect(r.xml?.childText("Message") == "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms or aws:kms:dsse")
            #expect(r.xml?.childText("ArgumentName") == "ApplyServerSideEncryptionByDefault")
            #expect(r.xml?.child("ArgumentValue") == nil)
        }
    }

    // MARK: Public access block, ownership controls

    @Test func publicAccessBlockLifecycle() throws {
        let s3 = try S3Harness()
        s3.makeBucket("pab")
        #expect(s3.call("GET", "/pab?publicAccessBlock").xml?.childText("RestrictPublicBuckets") == "true")
        #expect(put(s3, "/pab?publicAccessBlock", "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls></PublicAccessBlockConfiguration>").status == 200)
        let got = try #require(s3.call("GET", "/pab?publicAccessBlock").xml)
        #expect(got.childText("BlockPublicAcls") == "true")
        #expect(got.childText("BlockPublicPolicy") == "false")
        #expect(put(s3, "/pab?publicAccessBlock", "<PublicAccessBlockConfiguration><BlockPublicAcls>maybe</BlockPublicAcls></PublicAccessBlockConfiguration>").errorCode == "MalformedXML")
        #expect(s3.call("DELETE", "/pab?publicAccessBlock").status == 204)
        let gone = s3.call("GET", "/pab?publicAccessBlock")
        #expect(gone.status == 404)
        #expect(gone.errorCode == "NoSuchPublicAccessBlockConfiguration")
        #expect(gone.xml?.childText("Message") == "The public access block configuration was not found")
        #expect(gone.xml?.childText("BucketName") == "pab")
    }

    @Test func ownershipControlsLifecycle() throws {
        let s3 = try S3Harness()
        s3.makeBucket("own")
        #expect(s3.call("GET", "/own?ownershipControls").xml?.child("Rule")?.childText("ObjectOwnership") == "BucketOwnerEnforced")
        let preferred = "<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule></OwnershipControls>"
        #expect(put(s3, "/own?ownershipControls", preferred).status == 200)
        #expect(s3.call("GET", "/own?ownershipControls").xml?.child("Rule")?.childText("ObjectOwnership") == "BucketOwnerPreferred")
        #expect(put(s3, "/own?ownershipControls", "<OwnershipControls><Rule><ObjectOwnership>Nobody</ObjectOwnership></Rule></OwnershipControls>").errorCode == "MalformedXML")
        #expect(s3.call("DELETE", "/own?ownershipControls").status == 204)
        let gone = s3.call("GET", "/own?ownershipControls")
        #expect(gone.errorCode == "OwnershipControlsNotFoundError")
        #expect(gone.xml?.childText("Message") == "The bucket ownership controls were not found")
    }

    // MARK: Bucket tagging

    @Test func bucketTaggingLifecycle() throws {
        let s3 = try S3Harness()
        s3.makeBucket("tag")
        #expect(s3.call("GET", "/tag?tagging").errorCode == "NoSuchTagSet")
        let tags = "<Tagging><TagSet><Tag><Key>env</Key><Value>dev</Value></Tag><Tag><Key>team</Key><Value></Value></Tag></TagSet></Tagging>"
        #expect(put(s3, "/tag?tagging", tags).status == 204)
        let set = s3.call("GET", "/tag?tagging").xml?.child("TagSet")?.children(named: "Tag")
        #expect(set?.map { $0.childText("Key") ?? "" } == ["env", "team"])
        #expect(set?.map { $0.childText("Value") ?? "?" } == ["dev", ""])
        #expect(s3.call("DELETE", "/tag?tagging").status == 204)
        #expect(s3.call("GET", "/tag?tagging").errorCode == "NoSuchTagSet")
    }

    @Test(arguments: [
        ("<Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag>", "Cannot provide multiple Tags with the same key"),
        ("<Tag><Key>aws:x</Key><Value>1</Value></Tag>", "System tags cannot be added/updated by requester"),
        ("<Tag><Key>\(String(repeating: "k", count: 129))</Key><Value>1</Value></Tag>", "The TagKey you have provided is too long, max 128"),
        ("<Tag><Key>a</Key><Value>\(String(repeating: "v", count: 257))</Value></Tag>", "The TagValue you have provided is too long, max 256"),
        ("<Tag><Key>a{b}</Key><Value>1</Value></Tag>", "The TagKey you have provided is invalid"),
    ])
    func bucketTagRefusals(tags: String, message: String) throws {
        let s3 = try S3Harness()
        s3.makeBucket("tag")
        let r = put(s3, "/tag?tagging", "<Tagging><TagSet>\(tags)</TagSet></Tagging>")
        #expect(r.status == 400)
        #expect(r.errorCode == "InvalidTag")
        #expect(r.xml?.childText("Message") == message)
    }

    // MARK: Integrity and lifetime

    @Test func aSentDigestIsChecked() throws {
        let s3 = try S3Harness()
        s3.makeBucket("dig")
        let body = Array("<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>".utf8)
        let r = s3.call("PUT", "/dig?tagging", headers: [("Content-MD5", S3Harness.base64MD5(Array("other".utf8)))], body: body)
        #expect(r.errorCode == "BadDigest")
        // Without one, only the lifecycle configuration is refused (S3 requires it there).
        #expect(s3.call("PUT", "/dig?tagging", body: body).status == 204)
    }

    @Test func configurationsGoWithTheirBucketAndOnReset() throws {
        let s3 = try S3Harness()
        s3.makeBucket("gone")
        #expect(put(s3, "/gone?tagging", "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>").status == 204)
        #expect(s3.call("DELETE", "/gone?publicAccessBlock").status == 204)
        #expect(s3.call("DELETE", "/gone").status == 204)
        s3.makeBucket("gone")
        #expect(s3.call("GET", "/gone?tagging").errorCode == "NoSuchTagSet")
        #expect(s3.call("GET", "/gone?publicAccessBlock").status == 200)
        #expect(put(s3, "/gone?tagging", "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>").status == 204)
        try s3.service.reset()
        let rows = try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_bucket_config") }
        #expect(rows == 0)
    }
}
