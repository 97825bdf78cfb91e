/// A bucket's Block Public Access settings.
///
/// Related: PutPublicAccessBlock, PublicAccessBlockConfiguration and "Blocking public access to
/// your Amazon S3 storage": since April 2023 every new bucket has all four set, which is Hearth's
/// default too; DeletePublicAccessBlock leaves a bucket with none
/// (`NoSuchPublicAccessBlockConfiguration`). Hearth has no ACL writes, so the two ACL settings are
/// kept and returned only; BlockPublicPolicy refuses public policies and RestrictPublicBuckets
/// refuses anonymous requests to a bucket whose policy is public.
struct PublicAccessBlock: Sendable, Equatable {
    var blockPublicAcls = false
    var ignorePublicAcls = false
    var blockPublicPolicy = false
    var restrictPublicBuckets = false

    /// A new bucket's settings.
    static let newBucketDefault = PublicAccessBlock(blockPublicAcls: true, ignorePublicAcls: true, blockPublicPolicy: true,
                                                    restrictPublicBuckets: true)

    /// Parses a PutPublicAccessBlock body (an element left out is false, as in S3).
    static func parse(_ body: [UInt8]) -> Result<PublicAccessBlock, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "PublicAccessBlockConfiguration" else { return .failure(.malformedXML) }
        var out = PublicAccessBlock()
        var seen = Set<String>()
        for child in root.children {
            guard seen.insert(child.name).inserted, let value = XMLValues.bool(child.text) else { return .failure(.malformedXML) }
            switch child.name {
            case "BlockPublicAcls": out.blockPublicAcls = value
            case "IgnorePublicAcls": out.ignorePublicAcls = value
            case "BlockPublicPolicy": out.blockPublicPolicy = value
            case "RestrictPublicBuckets": out.restrictPublicBuckets = value
            default: return .failure(.malformedXML)
            }
        }
        return .success(out)
    }

    /// The GetPublicAccessBlock document (also what Hearth stores).
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("PublicAccessBlockConfiguration", namespace: true) { x in
            x.element("BlockPublicAcls", String(blockPublicAcls))
            x.element("IgnorePublicAcls", String(ignorePublicAcls))
            x.element("BlockPublicPolicy", String(blockPublicPolicy))
            x.element("RestrictPublicBuckets", String(restrictPublicBuckets))
        }
        return x
    }

    /// The settings in force for a stored configuration.
    static func effective(_ stored: S3Store.StoredConfig) -> PublicAccessBlock {
        switch stored {
        case .absent: newBucketDefault
        case .removed: PublicAccessBlock()
        case .document(let text): (try? parse(Array(text.utf8)).get()) ?? newBucketDefault
        }
    }
}
