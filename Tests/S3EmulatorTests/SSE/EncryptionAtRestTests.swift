import Foundation
import HearthCore
import HearthCrypto
import HearthSQLite
import Testing
@testable import S3Emulator

@Suite struct EncryptionAtRestTests {
    /// Every body row's bytes, concatenated: what a reader of the database file would find.
    private func storedBytes(_ s3: S3Harness) throws -> [UInt8] { try s3.storedBodyBytes() }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func sseS3AndKMSObjectsAreSealedAndReadBack() throws {
        let s3 = try S3Harness(configuration: S3Configuration(kmsKeys: [.init(keyID: "app-key")]))
        #expect(s3.call("PUT", "/bkt").status == 200)
        let plain = Array("plain-marker-0123456789".utf8)
        let secret = Array("sealed-marker-9876543210".utf8)
        #expect(s3.put("bkt", "p", plain).status == 200)
        #expect(s3.put("bkt", "s", secret, headers: [("x-amz-server-side-encryption", "AES256")]).status == 200)
        let kms = s3.put("bkt", "k", secret + secret, headers: [("x-amz-server-side-encryption", "aws:kms"),
                                                             ("x-amz-server-side-encryption-aws-kms-key-id", "app-key")])
        #expect(kms.status == 200, "\(kms.text)")
        #expect(kms.header("x-amz-server-side-encryption-aws-kms-key-id") == "arn:aws:kms:us-east-1:000000000000:key/app-key")
        let stored = try storedBytes(s3)
        #expect(contains(stored, plain))  // stored as sent: the search works
        #expect(!contains(stored, secret))
        #expect(s3.call("GET", "/bkt/s").body == secret)
        let range = s3.call("GET", "/bkt/k", headers: [("Range", "bytes=3-30")])
        #expect(range.status == 206 && range.body == Array((secret + secret)[3...30]))
    }

    @Test(arguments: [
        ("nope", "Invalid keyId nope"),
        ("alias/none", "Alias arn:aws:kms:us-east-1:000000000000:alias/none is not found."),
        ("0f9b04ee-ab13-4f35-a2b2-d0902bfe6a1e", "Key 'arn:aws:kms:us-east-1:000000000000:key/0f9b04ee-ab13-4f35-a2b2-d0902bfe6a1e' does not exist"),
        ("arn:aws:kms:ap-south-1:000000000000:key/x", "Invalid arn ap-south-1"),
    ])
    func unknownKMSKeys(reference: String, message: String) throws {
        let s3 = try S3Harness()
        #expect(s3.call("PUT", "/bkt").status == 200)
        let r = s3.put("bkt", "k", [1], headers: [("x-amz-server-side-encryption", "aws:kms"),
                                                   ("x-amz-server-side-encryption-aws-kms-key-id", reference)])
        #expect(r.status == 400)
        #expect(r.errorCode == "KMS.NotFoundException")
        #expect(r.xml?.childText("Message") == message)
    }

    @Test func theManagedKeyIsCreatedOncePerAccount() throws {
        let s3 = try S3Harness()
        #expect(s3.call("PUT", "/bkt").status == 200)
        let a = s3.put("bkt", "a", [1], headers: [("x-amz-server-side-encryption", "aws:kms")])
        let b = s3.put("bkt", "b", [2], headers: [("x-amz-server-side-encryption", "aws:kms"),
                                                   ("x-amz-server-side-encryption-aws-kms-key-id", "alias/aws/s3")])
        let arn = try #require(a.header("x-amz-server-side-encryption-aws-kms-key-id"))
        #expect(b.header("x-amz-server-side-encryption-aws-kms-key-id") == arn)
        #expect(KMSKeyRing.isUUID(String(arn.split(separator: "/").last ?? "")))
        #expect(try s3.service.keyRing.keys(account: "000000000000").map(\.alias) == ["alias/aws/s3"])
    }

    @Test(arguments: [
        ("plain ascii", "plain ascii"),
        ("Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="),
        ("tab\there", "tab\there"),
    ])
    func metadataIsAnsweredMailSafe(stored: String, answered: String) {
        #expect(MIMEEncodedWord.encode(stored) == answered)
        #expect(MIMEEncodedWord.decode(answered) == stored)
    }

    @Test func encodedWordsDecodeOnlyWhenWellFormed() {
        #expect(MIMEEncodedWord.decode("=?utf-8?Q?caf=C3=A9_au_lait?=") == "café au lait")
        #expect(MIMEEncodedWord.decode("=?ISO-8859-1?Q?caf=E9?=") == "=?ISO-8859-1?Q?caf=E9?=")  // only UTF-8 is decoded
        #expect(MIMEEncodedWord.decode("=?UTF-8?B?not base64?=") == "=?UTF-8?B?not base64?=")
        #expect(MIMEEncodedWord.decode("=?UTF-8?Q?bad=Z1?=") == "=?UTF-8?Q?bad=Z1?=")
        #expect(MIMEEncodedWord.decode("a=?UTF-8?B?YQ==?=") == "a=?UTF-8?B?YQ==?=")
    }
}
