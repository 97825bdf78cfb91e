import Foundation

/// A bucket's tag set.
///
/// Related: PutBucketTagging, Tag, and "Using cost allocation S3 bucket tags": up to 50 tags with
/// unique keys of 1 to 128 and values of 0 to 256 Unicode characters (counted in UTF-16, as S3
/// stores them), letters, digits, white space and `_ . : / = + @ -`; keys starting `aws:` are
/// AWS's own. The set replaces the bucket's; an empty set removes it (GetBucketTagging is then
/// `NoSuchTagSet`, as for a bucket never tagged).
struct BucketTagging: Sendable, Equatable {
    var tags: [(key: String, value: String)]

    static let maxTags = 50

    static func == (a: BucketTagging, b: BucketTagging) -> Bool {
        a.tags.map(\.key) == b.tags.map(\.key) && a.tags.map(\.value) == b.tags.map(\.value)
    }

    /// Parses a PutBucketTagging body.
    static func parse(_ body: [UInt8]) -> Result<BucketTagging, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "Tagging", root.children.count == 1,
              let set = root.child("TagSet"), set.children.allSatisfy({ $0.name == "Tag" }) else { return .failure(.malformedXML) }
        var tags: [(key: String, value: String)] = []
        for tag in set.children {
            guard let key = tag.childText("Key"), let value = tag.childText("Value"), tag.children.count == 2 else {
                return .failure(.malformedXML)
            }
            guard (1...128).contains(key.utf16.count) else {
                return .failure(.invalidTag(message: "The TagKey you have provided is too long, max 128"))
            }
            guard value.utf16.count <= 256 else {
                return .failure(.invalidTag(message: "The TagValue you have provided is too long, max 256"))
            }
            guard allowed(key) else { return .failure(.invalidTag(message: "The TagKey you have provided is invalid")) }
            guard allowed(value) else { return .failure(.invalidTag(message: "The TagValue you have provided is invalid")) }
            if key.lowercased().hasPrefix("aws:") {
                return .failure(.invalidTag(message: "System tags cannot be added/updated by requester"))
            }
            if tags.contains(where: { $0.key == key }) {
                return .failure(.invalidTag(message: "Cannot provide multiple Tags with the same key"))
            }
            tags.append((key, value))
        }
        guard tags.count <= maxTags else {
            return .failure(.invalidTag(message: "Bucket tag count cannot be greater than \(maxTags)"))
        }
        return .success(BucketTagging(tags: tags))
    }

    /// Letters, digits, white space and `_ . : / = + @ -`.
    private static func allowed(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { s in
            s.properties.isAlphabetic || s.properties.numericType != nil || s.properties.isWhitespace || "_.:/=+@-".unicodeScalars.contains(s)
        }
    }

    /// The GetBucketTagging document (also what Hearth stores).
    var document: XMLWriter {
        var x = XMLWriter()
        x.group("Tagging", namespace: true) { x in
            x.group("TagSet") { x in
                for tag in tags {
                    x.group("Tag") { x in
                        x.element("Key", tag.key)
                        x.element("Value", tag.value)
                    }
                }
            }
        }
        return x
    }
}
