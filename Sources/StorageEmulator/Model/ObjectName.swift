/// GCS's naming rules for objects and buckets.
///
/// Related: "Object naming requirements" and "Bucket naming requirements" in the Cloud Storage docs.
enum ObjectName {
    /// Why `name` is not a valid object name, or nil when it is.
    static func problem(_ name: String) -> String? {
        let bytes = name.utf8.count
        if bytes == 0 { return "object names must not be empty" }
        if bytes > 1024 { return "object names are at most 1024 bytes of UTF-8, got \(bytes)" }
        if name.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) { return "object names must not contain carriage returns or line feeds" }
        if name == "." || name == ".." { return "object names must not be '.' or '..'" }
        if name.hasPrefix(".well-known/acme-challenge/") { return "object names must not start with .well-known/acme-challenge/" }
        return nil
    }

    /// Whether `name` is a valid bucket name.
    static func isValidBucket(_ name: String) -> Bool {
        let chars = Array(name.utf8)
        guard chars.count >= 3, chars.count <= 222 else { return false }
        let allowed = { (c: UInt8) in (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 45 || c == 95 || c == 46 }
        let alnum = { (c: UInt8) in (c >= 97 && c <= 122) || (c >= 48 && c <= 57) }
        guard chars.allSatisfy(allowed), alnum(chars.first!), alnum(chars.last!) else { return false }
        // Each dot-separated component is at most 63 characters.
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0.count <= 63 }
    }
}
