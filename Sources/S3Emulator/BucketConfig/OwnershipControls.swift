/// A bucket's Object Ownership setting.
///
/// Related: PutBucketOwnershipControls and OwnershipControlsRule: one rule with `ObjectOwnership`
/// `BucketOwnerEnforced` (every new bucket's since April 2023, Hearth's default),
/// `BucketOwnerPreferred` or `ObjectWriter`. After DeleteBucketOwnershipControls a bucket has none
/// (`OwnershipControlsNotFoundError`). Hearth keeps ACLs disabled whatever the setting says.
struct OwnershipControls: Sendable, Equatable {
    var objectOwnership: String

    static let values: Set<String> = ["BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"]
    static let newBucketDefault = OwnershipControls(objectOwnership: "BucketOwnerEnforced")

    /// Parses a PutBucketOwnershipControls body: exactly one rule with a valid value.
    static func parse(_ body: [UInt8]) -> Result<OwnershipControls, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "OwnershipControls", root.children.count == 1,
              let rule = root.child("Rule"), rule.children.count == 1, let value = rule.childText("ObjectOwnership"),
              values.contains(value) else { return .failure(.malformedXML) }
        return .success(OwnershipControls(objectOwnership: value))
    }

    /// The GetBucketOwnershipControls document (also what Hearth stores).
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("OwnershipControls", namespace: true) { x in
            x.group("Rule") { $0.element("ObjectOwnership", objectOwnership) }
        }
        return x
    }
}
