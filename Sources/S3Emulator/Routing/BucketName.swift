/// S3's general-purpose bucket naming rules.
///
/// Related: "Bucket naming rules" in the Amazon S3 user guide — 3 to 63 characters of lower-case
/// letters, digits, dots and hyphens, beginning and ending with a letter or digit, no two adjacent
/// dots, not formatted as an IPv4 address, and none of the reserved prefixes and suffixes.
enum BucketName {
    private static let reservedPrefixes = ["xn--", "sthree-", "amzn-s3-demo-"]
    private static let reservedSuffixes = ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"]

    /// Whether S3 would let a bucket be created with `name`.
    static func isValid(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (3...63).contains(b.count) else { return false }
        for c in b {
            let ok = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
            guard ok else { return false }
        }
        func alnum(_ c: UInt8) -> Bool { (c >= 97 && c <= 122) || (c >= 48 && c <= 57) }
        guard let first = b.first, let last = b.last, alnum(first), alnum(last) else { return false }
        if name.contains("..") { return false }
        if looksLikeIPv4(name) { return false }
        if reservedPrefixes.contains(where: { name.hasPrefix($0) }) { return false }
        if reservedSuffixes.contains(where: { name.hasSuffix($0) }) { return false }
        return true
    }

    private static func looksLikeIPv4(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { p in !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) }
    }
}
