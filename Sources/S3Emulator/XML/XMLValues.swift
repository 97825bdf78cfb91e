import Foundation

/// Reading the simple values of S3's request documents.
enum XMLValues {
    /// `true` / `false` (XML Schema also allows `1` / `0`), surrounding white space ignored.
    static func bool(_ text: String) -> Bool? {
        switch text.trimmingCharacters(in: .whitespacesAndNewlines) {
        case "true", "1": true
        case "false", "0": false
        default: nil
        }
    }

    /// An integer (XML Schema `int`/`long`: optional sign, digits), surrounding white space ignored.
    static func integer(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !t.isEmpty else { return nil }
        return Int64(t.hasPrefix("+") ? String(t.dropFirst()) : t)
    }
}
