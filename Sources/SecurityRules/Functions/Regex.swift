// Regular expressions: RE2 syntax, run by Foundation's NSRegularExpression (ICU).
//
// RE2 is (nearly) a subset of ICU's syntax, so a pattern is checked and translated rather than
// reimplemented. What RE2 rejects is rejected here too, so a rule never matches in Hearth what
// Firestore would refuse: backreferences (\1, (?P=name)), lookaround ((?=, (?!, (?<=, (?<!),
// atomic groups (?>…), possessive quantifiers (a*+), comments (?#…), \Z, \G, \C and the ICU-only
// flags x and w. Where the dialects differ in meaning the pattern is rewritten to RE2's: \d \s \w
// (and negations) are ASCII classes; `$` outside multi-line mode means end of text (ICU also
// accepts a trailing newline); `[` and `&` inside a character class are literals (ICU reads nested
// sets and `&&`); (?P<name> becomes (?<name>; \pL becomes \p{L}. The ungreedy flag (?U) has no ICU
// equivalent and is rejected. `matches` anchors the whole pattern (\A(?:…)\z): a full match, as
// the rules reference specifies. Compiled expressions are cached process-wide.
//
// Full matches (`matches`) of the common shapes run on NativeRegex instead (RE2 semantics, no ICU
// call, ~10× faster); a pattern it does not cover (case folding, \b, \p{…}, POSIX classes) uses ICU.

import Foundation

/// A compiled expression; NSRegularExpression is immutable and safe to share once built.
/// Full-match expressions run on NativeRegex when it supports the pattern (ICU otherwise).
final class CompiledRegex: @unchecked Sendable {
    let regex: NSRegularExpression?
    let native: NativeRegex?

    init(_ regex: NSRegularExpression) {
        self.regex = regex
        self.native = nil
    }

    init(native: NativeRegex) {
        self.regex = nil
        self.native = native
    }

    /// Whether the whole string matches (the expression is anchored with \A…\z).
    func fullMatch(_ s: String) -> Bool {
        if let native { return native.fullMatch(s) }
        guard let regex else { return false }
        let length = s.utf16.count
        return regex.rangeOfFirstMatch(in: s, options: [.anchored], range: NSRange(location: 0, length: length)).location != NSNotFound
    }
}

final class RegexCache: @unchecked Sendable {
    static let shared = RegexCache()

    private let lock = NSLock()
    private var full: [String: Result<CompiledRegex, EvalError>] = [:]
    private var partial: [String: Result<CompiledRegex, EvalError>] = [:]

    /// The compiled expression for an RE2 pattern, anchored for a full match when `full`.
    func regex(_ pattern: String, full isFull: Bool) -> Result<CompiledRegex, EvalError> {
        lock.lock()
        if let hit = isFull ? full[pattern] : partial[pattern] { lock.unlock(); return hit }
        lock.unlock()
        let result = RegexCache.compile(pattern, full: isFull)
        lock.lock()
        if full.count + partial.count > 2000 { full.removeAll(); partial.removeAll() }
        if isFull { full[pattern] = result } else { partial[pattern] = result }
        lock.unlock()
        return result
    }

    static func compile(_ pattern: String, full: Bool) -> Result<CompiledRegex, EvalError> {
        switch RE2Translator.translate(pattern) {
        case .failure(let e): return .failure(e)
        case .success(let icu):
            if full, let native = NativeRegex.compile(pattern) { return .success(CompiledRegex(native: native)) }
            let text = full ? "\\A(?:" + icu + ")\\z" : icu
            guard let re = try? NSRegularExpression(pattern: text, options: []) else {
                return .failure(EvalError("Invalid regular expression pattern. Pattern: \(pattern)."))
            }
            return .success(CompiledRegex(re))
        }
    }

    static func fullMatch(_ s: String, _ pattern: String) throws(EvalError) -> Bool {
        try shared.regex(pattern, full: true).get().fullMatch(s)
    }

    /// `s.split(pattern)` as the official emulator splits: a piece before every match (an empty
    /// match at the start too: `'ab'.split('x*')` is `['', 'a', 'b']`), then the rest; trailing
    /// empty pieces are dropped (`'a,,b,'.split(',')` is `['a', '', 'b']`), all but one when every
    /// piece is empty (`','.split(',')` and `''.split(',')` are `['']`).
    static func split(_ s: String, _ pattern: String) throws(EvalError) -> [String] {
        var pieces: [String] = []
        if pattern.isEmpty {
            // The empty pattern matches at every position: an empty piece, then each character.
            pieces.append("")
            for u in s.unicodeScalars { pieces.append(String(u)) }
        } else {
            guard let re = try shared.regex(pattern, full: false).get().regex else { return [s] }
            let ns = s as NSString
            var last = 0
            for m in re.matches(in: s, options: [], range: NSRange(location: 0, length: ns.length)) {
                pieces.append(ns.substring(with: NSRange(location: last, length: m.range.location - last)))
                last = m.range.location + m.range.length
            }
            pieces.append(ns.substring(from: last))
        }
        while pieces.count > 1, pieces.last!.isEmpty { pieces.removeLast() }
        return pieces
    }

    /// `s.replace(pattern, replacement)`: every match replaced by the replacement expanded as
    /// the official emulator's regular expressions (RE2/J's `Matcher.appendReplacement`) expand
    /// it (`expand`). The empty pattern matches at every position (`'ab'.replace('', '-')` is
    /// `'-a-b-'`, as the emulator answers).
    static func replace(_ s: String, _ pattern: String, _ replacement: String) throws(EvalError) -> String {
        guard let re = try shared.regex(pattern.isEmpty ? "(?:)" : pattern, full: false).get().regex else { return s }
        let ns = s as NSString
        let matches = re.matches(in: s, options: [], range: NSRange(location: 0, length: ns.length))
        guard !matches.isEmpty else { return s }
        let template = Array(replacement.utf8)
        let names = groupNames(pattern)
        var out = ""
        var last = 0
        for m in matches {
            out += ns.substring(with: NSRange(location: last, length: m.range.location - last))
            try expand(template, groups: re.numberOfCaptureGroups, names: names, into: &out) { n in
                let r = m.range(at: n)
                return r.location == NSNotFound ? nil : ns.substring(with: r)
            }
            last = m.range.location + m.range.length
        }
        out += ns.substring(from: last)
        return out
    }
}

extension RegexCache {
    /// Appends `template` with its group references filled in, as RE2/J's `appendReplacement`
    /// does on the official emulator: `\c` is `c` (any character); `$n` names group n, taking
    /// further digits while the number stays a group of the pattern (`$10` with one group is
    /// group 1, then '0'), and a group that took no part adds nothing; `${name}` names a named
    /// group (`(?P<name>…)`, `(?<name>…)`), one that took no part adding `null` (Java's append
    /// of a null string, as the emulator answers); any other `$`, and a last lone `$` or `\`,
    /// is itself. A number past the groups, a name the pattern lacks and an unclosed `${` fail
    /// the evaluation (the emulator's 500), only when a match expands them.
    static func expand(_ template: [UInt8], groups: Int, names: [String: Int], into out: inout String,
                       group: (Int) -> String?) throws(EvalError) {
        func literal(_ range: Range<Int>) {
            if !range.isEmpty { out += String(decoding: template[range], as: UTF8.self) }
        }
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        let m = template.count
        var last = 0, i = 0
        while i < m - 1 {
            let c = template[i]
            if c == UInt8(ascii: "\\") {
                literal(last..<i)
                last = i + 1
                i += 2
                continue
            }
            guard c == UInt8(ascii: "$") else { i += 1; continue }
            let next = template[i + 1]
            if isDigit(next) {
                literal(last..<i)
                var n = Int(next - UInt8(ascii: "0"))
                i += 2
                while i < m, isDigit(template[i]), n * 10 + Int(template[i] - UInt8(ascii: "0")) <= groups {
                    n = n * 10 + Int(template[i] - UInt8(ascii: "0"))
                    i += 1
                }
                if n > groups { throw EvalError.invalidArgument("replace", "n > number of groups: \(n)") }
                if let g = group(n) { out += g }
                last = i
            } else if next == UInt8(ascii: "{") {
                literal(last..<i)
                var j = i + 2
                while j < m, template[j] != UInt8(ascii: "}"), template[j] != UInt8(ascii: " ") { j += 1 }
                guard j < m, template[j] == UInt8(ascii: "}") else {
                    throw EvalError.invalidArgument("replace", "named capture group is missing trailing '}'")
                }
                let name = String(decoding: template[(i + 2)..<j], as: UTF8.self)
                guard let n = names[name] else { throw EvalError.invalidArgument("replace", "group '\(name)' not found") }
                out += group(n) ?? "null"
                last = j + 1
                i = j + 1
            } else {
                i += 1
            }
        }
        literal(last..<m)
    }

    /// The named groups of an RE2 pattern, by number: capturing groups are numbered by their
    /// opening parenthesis, `(` not followed by `?` or a named `(?P<name>`/`(?<name>` (escapes and
    /// character classes skipped).
    static func groupNames(_ pattern: String) -> [String: Int] {
        let p = Array(pattern.utf8)
        var out: [String: Int] = [:]
        var number = 0, i = 0, inClass = false
        while i < p.count {
            let c = p[i]
            if c == UInt8(ascii: "\\") { i += 2; continue }
            if inClass {
                if c == UInt8(ascii: "]") { inClass = false }
            } else if c == UInt8(ascii: "[") {
                inClass = true
                // A `]` first in the class is a literal (`[]a]`, `[^]a]`).
                if i + 1 < p.count, p[i + 1] == UInt8(ascii: "^") { i += 1 }
                if i + 1 < p.count, p[i + 1] == UInt8(ascii: "]") { i += 1 }
            } else if c == UInt8(ascii: "(") {
                if i + 1 < p.count, p[i + 1] == UInt8(ascii: "?") {
                    var k = i + 2
                    if k < p.count, p[k] == UInt8(ascii: "P") { k += 1 }
                    if k < p.count, p[k] == UInt8(ascii: "<"), let close = p[(k + 1)...].firstIndex(of: UInt8(ascii: ">")) {
                        number += 1
                        out[String(decoding: p[(k + 1)..<close], as: UTF8.self)] = number
                    }
                } else {
                    number += 1
                }
            }
            i += 1
        }
        return out
    }
}

enum RE2Translator {
    static func translate(_ pattern: String) -> Result<String, EvalError> {
        let p = Array(pattern.unicodeScalars)
        var out = ""
        var i = 0
        var inClass = false
        var classStart = 0
        let multiline = pattern.contains("(?m") || pattern.range(of: #"\(\?[a-zA-Z]*m"#, options: .regularExpression) != nil
        func fail(_ why: String) -> Result<String, EvalError> {
            .failure(EvalError("Invalid regular expression '\(pattern)': \(why) (RE2 syntax)."))
        }
        // 0: the last item was not a repetition; 1: a repetition; 2: a lazy repetition.
        var lastQuantifier = 0
        // Groups open at this point. The emulator refuses more than 20 nested (capturing or not),
        // in these words, and RE2 a count past 1000 (`x{0,1001}`); ICU would run both.
        var depth = 0
        let maxDepth = 20, maxCount = 1000
        while i < p.count {
            let c = p[i]
            let previousQuantifier = lastQuantifier
            lastQuantifier = 0
            if c == "\\" {
                guard i + 1 < p.count else { return fail("trailing backslash") }
                let e = p[i + 1]
                switch e {
                case "1"..."9":
                    return fail("backreferences are not supported")
                case "Z", "G", "C", "K", "R", "X", "h", "H", "V", "N":
                    return fail("\\\(e) is not supported")
                case "d": out += inClass ? "0-9" : "[0-9]"
                case "D": out += "[^0-9]"
                case "s": out += inClass ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]"
                case "S": out += "[^\\t\\n\\f\\r ]"
                case "w": out += inClass ? "0-9A-Za-z_" : "[0-9A-Za-z_]"
                case "W": out += "[^0-9A-Za-z_]"
                case "p", "P":
                    if i + 2 < p.count, p[i + 2] != "{" {
                        out += "\\\(e){\(p[i + 2])}"
                        i += 3
                        continue
                    }
                    // `\p{Name}` whole: its braces are the class's, not literal ones (the literal
                    // braces' escaping below made `\p{L}` into `\p\{L\}`, which ICU refused).
                    if i + 2 < p.count, let close = p[(i + 2)...].firstIndex(of: "}") {
                        out += String(String.UnicodeScalarView(p[i...close]))
                        i = close + 1
                        continue
                    }
                    out += "\\\(e)"
                case "Q":
                    // Literal text up to \E, copied as ICU reads it the same way.
                    var j = i + 2
                    var lit = ""
                    while j < p.count, !(p[j] == "\\" && j + 1 < p.count && p[j + 1] == "E") {
                        lit.unicodeScalars.append(p[j])
                        j += 1
                    }
                    out += NSRegularExpression.escapedPattern(for: lit)
                    i = min(j + 2, p.count)
                    continue
                default:
                    out += "\\"
                    out.unicodeScalars.append(e)
                }
                i += 2
                continue
            }
            if inClass {
                if c == "]", i > classStart {
                    inClass = false
                    out += "]"
                } else if c == "[" {
                    if i + 1 < p.count, p[i + 1] == ":" {
                        // A POSIX class [:alpha:] is copied whole.
                        var j = i + 2
                        while j + 1 < p.count, !(p[j] == ":" && p[j + 1] == "]") { j += 1 }
                        guard j + 1 < p.count else { return fail("unterminated POSIX class") }
                        out += String(String.UnicodeScalarView(p[i...(j + 1)]))
                        i = j + 2
                        continue
                    }
                    out += "\\["
                } else if c == "&" || c == "-" && i + 1 < p.count && p[i + 1] == "-" {
                    out += "\\"
                    out.unicodeScalars.append(c)
                } else {
                    out.unicodeScalars.append(c)
                }
                i += 1
                continue
            }
            switch c {
            case "[":
                inClass = true
                out += "["
                i += 1
                if i < p.count, p[i] == "^" { out += "^"; i += 1 }
                // A ']' right after '[' or '[^' is a literal.
                if i < p.count, p[i] == "]" { out += "\\]"; i += 1 }
                classStart = i
                continue
            case "(":
                if i + 1 < p.count, p[i + 1] == "?" {
                    let rest = String(String.UnicodeScalarView(p[(i + 2)..<min(p.count, i + 5)]))
                    if rest.hasPrefix("P<") {
                        out += "(?<"
                        i += 4
                        continue
                    }
                    if rest.hasPrefix("P=") || rest.hasPrefix("P>") { return fail("named backreferences are not supported") }
                    if rest.hasPrefix("=") || rest.hasPrefix("!") || rest.hasPrefix("<=") || rest.hasPrefix("<!") {
                        return fail("lookaround assertions are not supported")
                    }
                    if rest.hasPrefix(">") { return fail("atomic groups are not supported") }
                    if rest.hasPrefix("#") { return fail("comments are not supported") }
                    if rest.hasPrefix("<") {
                        out += "(?<"
                        i += 3
                        continue
                    }
                    // Flag group: only i, m, s (and '-') exist in both dialects.
                    var j = i + 2
                    while j < p.count, p[j] != ")", p[j] != ":" {
                        let f = p[j]
                        if f == "U" { return fail("the ungreedy flag (?U) is not supported by Hearth") }
                        guard f == "i" || f == "m" || f == "s" || f == "-" else { return fail("unknown flag '\(f)'") }
                        j += 1
                    }
                    guard j < p.count else { return fail("missing closing )") }
                }
                depth += 1
                if depth > maxDepth {
                    return .failure(EvalError("Regular expression too many nested groupings. Maximum allowed nested groupings: "
                                              + "\(maxDepth) Pattern: \(pattern)."))
                }
                out += "("
            case "+", "*", "?":
                // RE2 rejects stacked repetition (`a**`, ICU's possessive `a*+`); `a*?` is lazy.
                if c == "?", previousQuantifier == 1 {
                    lastQuantifier = 2
                    out += "?"
                    i += 1
                    continue
                }
                if previousQuantifier != 0 { return fail("bad repetition operator") }
                out.unicodeScalars.append(c)
                lastQuantifier = 1
                i += 1
                continue
            case "{":
                // A counted repetition {n}, {n,} or {n,m}; anything else is a literal brace.
                var j = i + 1
                var sawDigit = false
                var tooMany = false
                var count = 0
                while j < p.count, ("0"..."9").contains(p[j]) {
                    count = min(count * 10 + Int(p[j].value - 48), maxCount + 1)
                    j += 1; sawDigit = true
                }
                tooMany = count > maxCount
                if sawDigit, j < p.count, p[j] == "," {
                    j += 1
                    count = 0
                    while j < p.count, ("0"..."9").contains(p[j]) { count = min(count * 10 + Int(p[j].value - 48), maxCount + 1); j += 1 }
                    tooMany = tooMany || count > maxCount
                }
                if sawDigit, j < p.count, p[j] == "}" {
                    if previousQuantifier != 0 { return fail("bad repetition operator") }
                    if tooMany { return .failure(EvalError("Invalid regular expression pattern. Pattern: \(pattern).")) }
                    out += String(String.UnicodeScalarView(p[i...j]))
                    lastQuantifier = 1
                    i = j + 1
                    continue
                }
                out += "\\{"
            case ")":
                depth = max(0, depth - 1)
                out += ")"
            case "}":
                // RE2 reads a brace that closes no repetition as itself (`a{,2}` matches 'a{,2}');
                // ICU refuses it unescaped.
                out += "\\}"
            case "$":
                out += multiline ? "$" : "\\z"
            default:
                out.unicodeScalars.append(c)
            }
            i += 1
        }
        if inClass { return fail("missing closing ]") }
        return .success(out)
    }
}
