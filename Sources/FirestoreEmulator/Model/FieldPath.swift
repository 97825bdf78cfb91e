import HearthCore

/// A path to a field inside a document: `a.b`, `` `odd name`.c ``, or `__name__` (the document key).
///
/// Segments that are not simple identifiers (`[A-Za-z_][A-Za-z0-9_]*`) are quoted with backticks
/// in the canonical form, with `` \` `` and `\\` escaped inside, exactly as the Firestore API
/// writes and reads them.
///
/// Equal and hashed by the segments' UTF-8 bytes (`ExactString`), as Firestore tells field names apart.
struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    let segments: [String]

    init(_ segments: [String]) { self.segments = segments }

    static func == (a: FieldPath, b: FieldPath) -> Bool { ExactString.equal(a.segments, b.segments) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(segments.count)
        for s in segments { ExactString(s).hash(into: &hasher) }
    }

    /// The document-key pseudo field.
    static let documentKey = FieldPath(["__name__"])

    /// Whether this is `__name__`.
    var isDocumentKey: Bool { segments.count == 1 && segments[0] == "__name__" }

    /// Maximum bytes of a field path, as Firestore documents.
    static let maxBytes = 1500

    /// The canonical string (`a.b`, `` a.`b c` ``).
    var canonical: String {
        // Most paths are one name: no array to map, no join (a query plans with these per access path).
        if segments.count == 1 { return FieldPath.quoteIfNeeded(segments[0]) }
        return segments.map(FieldPath.quoteIfNeeded).joined(separator: ".")
    }

    var description: String { canonical }

    /// Whether `other` is this path or inside it.
    func isPrefix(of other: FieldPath) -> Bool {
        other.segments.count >= segments.count && ExactString.equal(Array(other.segments.prefix(segments.count)), segments)
    }

    static func isSimple(_ segment: String) -> Bool {
        func letter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 }
        // Over the contiguous UTF-8 buffer: every index entry of every commit asks it of its field
        // name on the single writer, and walking `utf8` (index by index) cost ~350 instructions a name.
        var segment = segment
        return segment.withUTF8 { bytes in
            guard let first = bytes.first, letter(first) else { return false }
            for c in bytes where !letter(c) && !(c >= 48 && c <= 57) { return false }
            return true
        }
    }

    static func quoteIfNeeded(_ segment: String) -> String {
        if isSimple(segment) { return segment }
        var out = "`"
        for c in segment {
            if c == "`" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        out.append("`")
        return out
    }

    /// Why a field path string did not parse.
    enum ParseError: Error, Equatable {
        case empty
        case emptySegment
        case unterminatedQuote
        case badEscape
        case unexpectedCharacter(Character)
        case tooLong
    }

    /// Parses the API's field path syntax.
    static func parse(_ text: String) throws(ParseError) -> FieldPath {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= maxBytes else { throw .tooLong }
        if let plain = parsePlain(text) { return plain }
        var segments: [String] = []
        let chars = Array(text)
        var i = 0
        while true {
            guard i < chars.count else { throw .emptySegment }
            var segment = ""
            if chars[i] == "`" {
                i += 1
                var closed = false
                while i < chars.count {
                    let c = chars[i]
                    if c == "\\" {
                        guard i + 1 < chars.count, chars[i + 1] == "`" || chars[i + 1] == "\\" else { throw .badEscape }
                        segment.append(chars[i + 1])
                        i += 2
                    } else if c == "`" {
                        closed = true
                        i += 1
                        break
                    } else {
                        segment.append(c)
                        i += 1
                    }
                }
                guard closed else { throw .unterminatedQuote }
                guard !segment.isEmpty else { throw .emptySegment }
            } else {
                while i < chars.count, chars[i] != "." {
                    let c = chars[i]
                    guard c.isASCII, c.isLetter || c.isNumber || c == "_" else {
                        throw .unexpectedCharacter(c)
                    }
                    segment.append(c)
                    i += 1
                }
                guard !segment.isEmpty else { throw .emptySegment }
                // An unquoted segment must be an identifier: it may not start with a digit.
                if let f = segment.first, f.isNumber, f.isASCII { throw .unexpectedCharacter(f) }
            }
            segments.append(segment)
            if i == chars.count { break }
            guard chars[i] == "." else { throw .unexpectedCharacter(chars[i]) }
            i += 1
        }
        return FieldPath(segments)
    }

    /// The path when `text` is dot-separated identifiers (`a.b_1`, nearly every path clients
    /// send), read byte by byte; nil for anything else, which `parse` then reads by Characters
    /// (quoted segments, and every error with its message).
    private static func parsePlain(_ text: String) -> FieldPath? {
        var segments: [String] = []
        var start = text.utf8.startIndex
        var atStart = true
        for i in text.utf8.indices {
            let b = text.utf8[i]
            if b == UInt8(ascii: ".") {
                if atStart { return nil }
                segments.append(String(text[start..<i]))
                start = text.utf8.index(after: i)
                atStart = true
                continue
            }
            let letter = (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || b == UInt8(ascii: "_")
            let digit = b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")
            if !(letter || (digit && !atStart)) { return nil }
            atStart = false
        }
        if atStart { return nil }
        segments.append(String(text[start...]))
        return FieldPath(segments)
    }
}
