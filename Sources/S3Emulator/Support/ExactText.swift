import Foundation

/// A string compared and hashed by its UTF-8 bytes.
///
/// Swift's `String ==` equates canonically equivalent text (`é` precomposed and decomposed), but
/// S3 keys, SQLite's `=` and signatures all see bytes: two keys that differ only in normalisation
/// are two objects and sign differently, so caches keyed by request text must not conflate them.
struct ExactText: Hashable, Sendable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (a: ExactText, b: ExactText) -> Bool { ExactText.sameBytes(a.text, b.text) }

    func hash(into hasher: inout Hasher) {
        var copy = text
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }

    /// Whether `a` and `b` have the same UTF-8 bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var x = a, y = b
        return x.withUTF8 { p in y.withUTF8 { q in p.count == q.count && (p.isEmpty || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0) } }
    }
}
