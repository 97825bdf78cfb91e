import Foundation

/// A `matchGlob` pattern of the objects.list call, compiled to a regular expression.
///
/// What GCS accepts: `*` (any run of characters but `/`), `**` (any run, `/` included; `**/`
/// also matches no folder at all, so `a/**/b` matches `a/b`), `?` (one character but `/`),
/// classes `[abc]`, `[a-z]`, `[!a]`/`[^a]` (any one character, `/` included when named),
/// alternatives `{png,jpg}` (nestable) and `\` escaping the next character. Malformed patterns
/// are refused with the messages GCS answers (indexes are byte offsets into the pattern).
struct NameGlob {
    private let regex: NSRegularExpression

    /// Compiles `pattern`; throws `invalid` with GCS's message when it is malformed.
    init(_ pattern: String) throws(StorageError) {
        let source = try Self.translate(Array(pattern.utf8))
        do {
            regex = try NSRegularExpression(pattern: "\\A(?:" + source + ")\\z", options: [.dotMatchesLineSeparators])
        } catch {
            throw .invalid("Invalid glob pattern: \(pattern)")
        }
    }

    /// Whether the whole name matches.
    func matches(_ name: String) -> Bool {
        regex.firstMatch(in: name, options: [.anchored], range: NSRange(name.startIndex..., in: name)) != nil
    }

    // MARK: Translation

    /// The decoded scalar at byte offset `i` and its length (an invalid byte decodes to U+FFFD, as GCS reads it).
    private static func scalar(_ p: [UInt8], _ i: Int) -> (Unicode.Scalar, Int) {
        var it = p[i...].makeIterator()
        var decoder = UTF8()
        switch decoder.decode(&it) {
        case .scalarValue(let s): return (s, String(s).utf8.count)
        default: return ("\u{FFFD}", 1)
        }
    }

    private static func literal(_ s: Unicode.Scalar) -> String {
        NSRegularExpression.escapedPattern(for: String(s))
    }

    /// The regular expression for a glob, validating it as GCS does.
    static func translate(_ p: [UInt8]) throws(StorageError) -> String {
        var out = ""
        var braces: [Int] = []
        var i = 0
        while i < p.count {
            let (c, size) = scalar(p, i)
            switch c {
            case "\\":
                i += size
                if i < p.count {
                    let (e, n) = scalar(p, i)
                    out += literal(e)
                    i += n
                }
                continue
            case "*":
                if i + 1 < p.count, p[i + 1] == UInt8(ascii: "*") {
                    if i + 2 < p.count, p[i + 2] == UInt8(ascii: "/") {
                        out += "(?:.*/)?"
                        i += 3
                    } else {
                        out += ".*"
                        i += 2
                    }
                    continue
                }
                out += "[^/]*"
            case "?":
                out += "[^/]"
            case "[":
                let (next, cls) = try characterClass(p, at: i, inBraces: !braces.isEmpty)
                out += cls
                i = next
                continue
            case "]":
                throw .invalid("Glob pattern had closing character class ']' at index \(i) without any previous opening '['. Either add an opening '[' or use '\\]' to match ']'.")
            case "{":
                braces.append(i)
                out += "(?:"
            case "}":
                guard braces.popLast() != nil else { throw closingBrace(i) }
                out += ")"
            case "," where !braces.isEmpty:
                out += "|"
            default:
                out += literal(c)
            }
            i += size
        }
        if let open = braces.last {
            throw .invalid("Glob pattern brace expansion opening '{' at index \(open) has no closing '}'. Use '\\{' to match a literal '{'.")
        }
        return out
    }

    private static func closingBrace(_ i: Int) -> StorageError {
        .invalid("Glob pattern brace expansion closing '}' at index \(i) has no previous opening '{'. Use '\\}' to match a literal '}'.")
    }

    /// The class opening at `start`: where the pattern continues and the class as a regex.
    private static func characterClass(_ p: [UInt8], at start: Int, inBraces: Bool) throws(StorageError) -> (Int, String) {
        let unclosed = StorageError.invalid("Glob pattern character class has no closing ']' for opening '[' at index \(start). Either add a closing ']' or use '\\[' to match a literal '['.")
        var i = start + 1
        var negated = false
        if i < p.count, p[i] == UInt8(ascii: "!") || p[i] == UInt8(ascii: "^") {
            negated = true
            i += 1
        }
        var members: [(Unicode.Scalar, Unicode.Scalar)] = []
        var pendingLow: Unicode.Scalar?   // "x-" seen: the range's end comes next
        func add(_ s: Unicode.Scalar) throws(StorageError) {
            if let low = pendingLow {
                guard low.value <= s.value else { throw .invalid("Invalid range '\(Character(low))-\(Character(s))' in glob pattern character class.") }
                members.removeLast()
                members.append((low, s))
                pendingLow = nil
            } else {
                members.append((s, s))
            }
        }
        while i < p.count {
            let (c, size) = scalar(p, i)
            switch c {
            case "\\":
                i += size
                guard i < p.count else { throw unclosed }
                let (e, n) = scalar(p, i)
                try add(e)
                i += n
                continue
            case "]":
                guard !members.isEmpty else {
                    throw .invalid("Glob pattern character class at index \(start) must have at least one character in it.")
                }
                if pendingLow != nil { members.append(("-", "-")) }
                // Members as \x{…}: no character has a meaning of its own inside the class then.
                func hex(_ s: Unicode.Scalar) -> String { "\\x{" + String(s.value, radix: 16) + "}" }
                let body = members.map { a, b in a == b ? hex(a) : hex(a) + "-" + hex(b) }.joined()
                return (i + size, "[" + (negated ? "^" : "") + body + "]")
            case "[":
                throw .invalid("Glob pattern character class does not support the unescaped '[' at index \(i). Use '\\[' to match '['.")
            case "{":
                throw unclosed
            case "}":
                throw inBraces ? unclosed : closingBrace(i)
            case "," where inBraces:
                throw unclosed
            case "-" where pendingLow == nil && !members.isEmpty && members.last!.0 == members.last!.1:
                pendingLow = members.last!.0
            default:
                try add(c)
            }
            i += size
        }
        throw unclosed
    }
}
