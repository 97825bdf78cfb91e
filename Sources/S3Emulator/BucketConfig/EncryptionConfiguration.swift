import Foundation

/// A bucket's default encryption.
///
/// Related: PutBucketEncryption, ServerSideEncryptionRule, ServerSideEncryptionByDefault, and
/// "Setting default server-side encryption behavior": since January 2023 every bucket encrypts new
/// objects with SSE-S3 at least, so a bucket without a configuration reports SSE-S3, and
/// DeleteBucketEncryption "resets the default encryption for the bucket as server-side encryption
/// with Amazon S3 managed keys (SSE-S3)" (S3 no longer answers
/// `ServerSideEncryptionConfigurationNotFoundError` for a bucket). Validation as S3 answered it in
/// LocalStack's AWS-validated recordings.
struct EncryptionConfiguration: Sendable, Equatable {
    var algorithm: String
    var kmsMasterKeyID: String?
    var bucketKeyEnabled: Bool

    static let algorithms: Set<String> = ["AES256", "aws:kms", "aws:kms:dsse"]
    static let sseS3 = EncryptionConfiguration(algorithm: "AES256", kmsMasterKeyID: nil, bucketKeyEnabled: false)

    /// Parses a PutBucketEncryption body: one rule, a known algorithm, a KMS key only with KMS.
    static func parse(_ body: [UInt8]) -> Result<EncryptionConfiguration, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "ServerSideEncryptionConfiguration",
              root.children.allSatisfy({ $0.name == "Rule" }), root.children.count == 1, let rule = root.child("Rule"),
              let byDefault = rule.child("ApplyServerSideEncryptionByDefault") else { return .failure(.malformedXML) }
        var bucketKey = false
        for child in rule.children {
            switch child.name {
            case "ApplyServerSideEncryptionByDefault": continue
            case "BucketKeyEnabled":
                guard let value = XMLValues.bool(child.text) else { return .failure(.malformedXML) }
                bucketKey = value
            // Newer SDKs may send which client-side types to block; Hearth has nothing to block.
            case "BlockedEncryptionTypes": continue
            default: return .failure(.malformedXML)
            }
        }
        guard byDefault.children.allSatisfy({ ["SSEAlgorithm", "KMSMasterKeyID"].contains($0.name) }),
              let algorithm = byDefault.childText("SSEAlgorithm")?.trimmingCharacters(in: .whitespacesAndNewlines), algorithms.contains(algorithm) else {
            return .failure(.malformedXML)
        }
        let key = byDefault.childText("KMSMasterKeyID")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if key != nil, !algorithm.hasPrefix("aws:kms") {
            return .failure(.invalidArgument(
                message: "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms or aws:kms:dsse",
                name: "ApplyServerSideEncryptionByDefault", value: nil))
        }
        return .success(EncryptionConfiguration(algorithm: algorithm, kmsMasterKeyID: key, bucketKeyEnabled: bucketKey))
    }

    /// The GetBucketEncryption document (also what Hearth stores).
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("ServerSideEncryptionConfiguration", namespace: true) { x in
            x.group("Rule") { x in
                x.group("ApplyServerSideEncryptionByDefault") { x in
                    x.element("SSEAlgorithm", algorithm)
                    x.element("KMSMasterKeyID", ifPresent: kmsMasterKeyID)
                }
                x.element("BucketKeyEnabled", String(bucketKeyEnabled))
            }
        }
        return x
    }
}
