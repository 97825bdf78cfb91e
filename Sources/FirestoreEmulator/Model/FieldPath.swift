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
    ///
    /// Inside a quoted segment a backslash starts an escape, read as Firestore reads it (the
    /// official emulator; the API documents only that `` ` `` and `\\` must be escaped): `\\`,
    /// `` \` ``, `\'`, `\"`, `\?`, the C letters `\a \b \f \n \r \t \v`, exactly three octal digits
    /// (at most `\377`), `\x`/`\X` and exactly two hex digits, `\u` and four, `\U` and eight (at
    /// most U+10FFFF). `\u` escapes are UTF-16 code units: a high and a low surrogate in a row make
    /// one character, and a lone surrogate is stored as `?`. Any other escape is refused.
    /// Reviewed in docs/firestore.md, *Decisions where the official emulator differs* (faith30).
    static func parse(_ text: String) throws(ParseError) -> FieldPath {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= maxBytes else { throw .tooLong }
        if let plain = parsePlain(text) { return plain }
        var segments: [String] = []
        // Scalars, not Characters: a backslash followed by a combining mark is one Character.
        let chars = Array(text.unicodeScalars)
        var i = 0
        while true {
            guard i < chars.count else { throw .emptySegment }
            var segment = String.UnicodeScalarView()
            if chars[i] == "`" {
                i += 1
                var closed = false
                var high: UInt32?  // a high surrogate just escaped (stored as `?` until a low one follows)
                while i < chars.count {
                    let c = chars[i]
                    if c == "\\" {
                        let (unit, next) = try unescape(chars, at: i + 1)
                        i = next
                        switch unit {
                        case 0xD800...0xDBFF:
                            segment.append("?")
                            high = unit
                            continue
                        case 0xDC00...0xDFFF:
                            if let h = high {
                                segment.removeLast()
                                // Force-unwrap safe: a surrogate pair's scalar is in U+10000...U+10FFFF.
                                segment.append(Unicode.Scalar(0x10000 + ((h - 0xD800) << 10) + (unit - 0xDC00))!)
                            } else {
                                segment.append("?")
                            }
                        default:
                            // Force-unwrap safe: `unescape` yields scalars and surrogates only.
                            segment.append(Unicode.Scalar(unit)!)
                        }
                        high = nil
                    } else if c == "`" {
                        closed = true
                        i += 1
                        break
                    } else {
                        segment.append(c)
                        high = nil
                        i += 1
                    }
                }
                guard closed else { throw .unterminatedQuote }
                guard !segment.isEmpty else { throw .emptySegment }
            } else {
                while i < chars.count, chars[i] != "." {
                    let c = chars[i]
                    guard c.isASCII, c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" else {
                        throw .unexpectedCharacter(Character(c))
                    }
                    segment.append(c)
                    i += 1
                }
                guard let f = segment.first else { throw .emptySegment }
                // An unquoted segment must be an identifier: it may not start with a digit.
                if ("0"..."9").contains(f) { throw .unexpectedCharacter(Character(f)) }
            }
            segments.append(String(segment))
            if i == chars.count { break }
            guard chars[i] == "." else { throw .unexpectedCharacter(Character(chars[i])) }
            i += 1
        }
        return FieldPath(segments)
    }

    /// The escape after a backslash at `chars[at]`: the character's code point (a UTF-16 surrogate
    /// for a `\u`/`\U` escape of one) and the index after the escape.
    private static func unescape(_ chars: [Unicode.Scalar], at start: Int) throws(ParseError) -> (UInt32, Int) {
        guard start < chars.count else { throw .badEscape }
        func digits(_ count: Int, from: Int, radix: UInt32) throws(ParseError) -> UInt32 {
            guard from + count <= chars.count else { throw .badEscape }
            var value: UInt32 = 0
            for c in chars[from..<(from + count)] {
                guard c.isASCII, let d = UInt32(String(c), radix: Int(radix)) else { throw .badEscape }
                value = value * radix + d
            }
            return value
        }
        switch chars[start] {
        case "a": return (0x07, start + 1)
        case "b": return (0x08, start + 1)
        case "f": return (0x0C, start + 1)
        case "n": return (0x0A, start + 1)
        case "r": return (0x0D, start + 1)
        case "t": return (0x09, start + 1)
        case "v": return (0x0B, start + 1)
        case "\\", "`", "'", "\"", "?": return (chars[start].value, start + 1)
        case "0"..."7":
            let v = try digits(3, from: start, radix: 8)
            guard v <= 0o377 else { throw .badEscape }
            return (v, start + 3)
        case "x", "X": return (try digits(2, from: start + 1, radix: 16), start + 3)
        case "u": return (try digits(4, from: start + 1, radix: 16), start + 5)
        case "U":
            let v = try digits(8, from: start + 1, radix: 16)
            guard v <= 0x10FFFF else { throw .badEscape }
            return (v, start + 9)
        default: throw .badEscape
        }
    }

    /// The path when `text` is dot-separated identifiers (`a.b_1`, nearly every path clients
    /// send), read byte by byte; nil for anything else, which `parse` then reads by scalars
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
