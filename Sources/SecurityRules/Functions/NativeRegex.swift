// A small RE2-semantics matcher for the patterns rules files use (literals, `.`, classes, groups,
// alternation, `* + ? {n,m}`, `^ $ \A \z`, flags s and m), run as a lazily built DFA over Unicode
// scalars: linear in the input, no backtracking, no ICU call. `matches` only asks whether the whole
// string matches, so greediness does not matter and a DFA answers it exactly.
//
// Anything outside that subset (case-insensitive matching, \b, \p{…}, POSIX classes, \Q…\E, huge
// counted repetitions) makes `compile` return nil and the caller uses NSRegularExpression instead.
// Line semantics are RE2's: `.` excludes only "\n" and multi-line `^`/`$` look only at "\n".

import Foundation

final class NativeRegex: @unchecked Sendable {
    /// One NFA instruction.
    enum Inst {
        case char(UInt32)
        case any
        case anyNotNewline
        case cls(Int)
        case split(Int32, Int32)
        case jump(Int32)
        case beginLine, endLine, beginText, endText
        case match
    }

    /// A character class: sorted, non-overlapping ranges.
    struct CharClass {
        var ranges: [ClosedRange<UInt32>]
        var negated: Bool

        func contains(_ c: UInt32) -> Bool {
            var found = false
            for r in ranges where r.contains(c) { found = true; break }
            return found != negated
        }
    }

    private let program: [Inst]
    private let classes: [CharClass]

    // Lazily built DFA; `lock` guards everything below (matching is short, contention is rare).
    private let lock = NSLock()
    /// DFA state key: the NFA pcs reached (before following empty transitions) and what came before.
    private struct StateKey: Hashable {
        var pcs: [Int32]
        var previous: UInt8   // 0 start of text, 1 after "\n", 2 after anything else
    }
    private var keys: [StateKey] = []
    private var index: [StateKey: Int32] = [:]
    /// 128 ASCII transitions per state; -1 unknown.
    private var ascii: [Int32] = []
    private var other: [[UInt32: Int32]] = []
    /// Whether the text may end in each state: -1 unknown, 0 no, 1 yes.
    private var accepts: [Int8] = []
    /// States with no live NFA thread: no input can lead to a match from them.
    private var isDead: [Bool] = []
    private var mark: [UInt32]
    private var generation: UInt32 = 0
    static let maxStates = 4096

    /// Whether A–Z in the input are read as a–z (`loweringInput()`): the rules' `s.lower().matches(…)`
    /// judged on `s` itself. Only transitions not yet in the table look at it, so the table's run
    /// costs what it costs without.
    private let lowersInput: Bool

    private init(program: [Inst], classes: [CharClass], lowersInput: Bool = false) {
        self.program = program
        self.classes = classes
        self.lowersInput = lowersInput
        self.mark = Array(repeating: 0, count: program.count)
    }

    /// The same expression matched against the input with its ASCII capitals lowered (the
    /// rules' `lower()`: A–Z only, every other character as it is), with a table of its own:
    /// `fullMatch(s)` of the result is `fullMatch(s.lower())` of this one.
    func loweringInput() -> NativeRegex {
        let re = NativeRegex(program: program, classes: classes, lowersInput: true)
        re.lock.lock()
        _ = re.state(StateKey(pcs: [0], previous: 0))
        re.lock.unlock()
        return re
    }

    /// The matcher for an RE2 pattern (already validated by RE2Translator), or nil when the pattern
    /// uses something this matcher does not implement.
    static func compile(_ pattern: String) -> NativeRegex? {
        var parser = RegexParser(Array(pattern.unicodeScalars))
        guard let tree = parser.parse() else { return nil }
        var builder = NFABuilder()
        guard builder.emit(tree) else { return nil }
        builder.program.append(.match)
        let re = NativeRegex(program: builder.program, classes: builder.classes)
        re.lock.lock()
        _ = re.state(StateKey(pcs: [0], previous: 0))
        re.lock.unlock()
        return re
    }

    /// Whether the whole string matches.
    func fullMatch(_ s: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        var s = s
        return s.withUTF8 { run($0) }
    }

    private func run(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var state: Int32 = 0
        var i = 0
        let n = bytes.count
        while i < n {
            // Fast path: ASCII bytes whose transitions are already in the table, read through raw
            // buffers (no bounds or exclusivity checks per byte); leaves at the first miss.
            // A transition into a dead state is stored as -2, so one load per byte decides.
            var dead = false
            ascii.withUnsafeBufferPointer { table in
                while i < n {
                    let b = bytes[i]
                    guard b < 0x80 else { return }
                    let next = table[Int(state) &* 128 &+ Int(b)]
                    guard next >= 0 else {
                        dead = next == -2
                        return
                    }
                    state = next
                    i += 1
                }
            }
            if dead { return false }
            if i == n { break }
            let b = bytes[i]
            if b < 0x80 {
                state = transition(state, UInt32(b))
                i += 1
            } else {
                // Decode one scalar (the string is valid UTF-8).
                var c: UInt32
                let len: Int
                if b >= 0xF0 { c = UInt32(b & 0x07); len = 4 } else if b >= 0xE0 { c = UInt32(b & 0x0F); len = 3 } else { c = UInt32(b & 0x1F); len = 2 }
                var k = 1
                while k < len, i + k < n { c = c << 6 | UInt32(bytes[i + k] & 0x3F); k += 1 }
                i += len
                state = other[Int(state)][c] ?? transition(state, c)
            }
            if isDead[Int(state)] { return false }
        }
        if accepts[Int(state)] < 0 {
            accepts[Int(state)] = closure(keys[Int(state)], next: 0).matched ? 1 : 0
        }
        return accepts[Int(state)] == 1
    }

    private func state(_ key: StateKey) -> Int32? {
        if let i = index[key] { return i }
        guard keys.count < NativeRegex.maxStates else { return nil }
        let i = Int32(keys.count)
        keys.append(key)
        index[key] = i
        ascii.append(contentsOf: repeatElement(-1, count: 128))
        other.append([:])
        accepts.append(-1)
        isDead.append(key.pcs.isEmpty)
        return i
    }

    /// The state after reading c, remembered in the table (unless the table was just rebuilt).
    private func transition(_ from: Int32, _ read: UInt32) -> Int32 {
        // Lowering maps ASCII to ASCII, so the table slot below is the byte read either way.
        let c = lowersInput && read &- 0x41 < 26 ? read | 0x20 : read
        let key = keys[Int(from)]
        let (consuming, _) = closure(key, next: c == 0x0A ? 1 : 2)
        generation &+= 1
        var out: [Int32] = []
        for pc in consuming {
            let ok: Bool
            switch program[Int(pc)] {
            case .char(let x): ok = x == c
            case .any: ok = true
            case .anyNotNewline: ok = c != 0x0A
            case .cls(let k): ok = classes[k].contains(c)
            default: ok = false
            }
            if ok, mark[Int(pc) + 1] != generation {
                mark[Int(pc) + 1] = generation
                out.append(pc + 1)
            }
        }
        out.sort()
        let target = StateKey(pcs: out, previous: c == 0x0A ? 1 : 2)
        guard let t = state(target) else {
            // Too many states: start over with an empty table (correct, only slower for this input).
            resetCache()
            return state(target) ?? 0
        }
        if read < 0x80 { ascii[Int(from) * 128 + Int(read)] = isDead[Int(t)] ? -2 : t } else { other[Int(from)][read] = t }
        return t
    }

    private func resetCache() {
        keys.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
        ascii.removeAll(keepingCapacity: true)
        other.removeAll(keepingCapacity: true)
        accepts.removeAll(keepingCapacity: true)
        isDead.removeAll(keepingCapacity: true)
        _ = state(StateKey(pcs: [0], previous: 0))
    }

    /// Follows empty transitions from a state's pcs; next: 0 end of text, 1 "\n", 2 other.
    private func closure(_ key: StateKey, next: UInt8) -> (consuming: [Int32], matched: Bool) {
        generation &+= 1
        var stack = key.pcs
        var consuming: [Int32] = []
        var matched = false
        while let pc = stack.popLast() {
            if mark[Int(pc)] == generation { continue }
            mark[Int(pc)] = generation
            switch program[Int(pc)] {
            case .char, .any, .anyNotNewline, .cls: consuming.append(pc)
            case .split(let a, let b):
                stack.append(b)
                stack.append(a)
            case .jump(let a): stack.append(a)
            case .beginLine: if key.previous <= 1 { stack.append(pc + 1) }
            case .beginText: if key.previous == 0 { stack.append(pc + 1) }
            case .endLine: if next <= 1 { stack.append(pc + 1) }
            case .endText: if next == 0 { stack.append(pc + 1) }
            case .match: matched = true
            }
        }
        return (consuming, matched)
    }
}

/// The parse tree of a supported pattern.
private indirect enum RegexNode {
    case empty
    case char(UInt32)
    case any(dotAll: Bool)
    case cls(NativeRegex.CharClass)
    case beginLine, endLine, beginText, endText
    case concat([RegexNode])
    case alternate([RegexNode])
    case repeatNode(RegexNode, min: Int, max: Int?)
}

private struct RegexParser {
    let p: [Unicode.Scalar]
    var i = 0
    var dotAll = false
    var multiLine = false
    var groupDepth = 0

    init(_ p: [Unicode.Scalar]) { self.p = p }

    mutating func parse() -> RegexNode? {
        guard let n = alternation(), i == p.count else { return nil }
        return n
    }

    private mutating func alternation() -> RegexNode? {
        var branches: [RegexNode] = []
        guard let first = concatenation() else { return nil }
        branches.append(first)
        while i < p.count, p[i] == "|" {
            i += 1
            guard let next = concatenation() else { return nil }
            branches.append(next)
        }
        return branches.count == 1 ? branches[0] : .alternate(branches)
    }

    private mutating func concatenation() -> RegexNode? {
        var items: [RegexNode] = []
        while i < p.count, p[i] != "|", p[i] != ")" {
            guard let atom = atom() else { return nil }
            guard let repeated = repetition(atom) else { return nil }
            items.append(repeated)
        }
        return items.count == 1 ? items[0] : .concat(items)
    }

    private mutating func repetition(_ atom: RegexNode) -> RegexNode? {
        guard i < p.count else { return atom }
        var node = atom
        let c = p[i]
        switch c {
        case "*": node = .repeatNode(atom, min: 0, max: nil); i += 1
        case "+": node = .repeatNode(atom, min: 1, max: nil); i += 1
        case "?": node = .repeatNode(atom, min: 0, max: 1); i += 1
        case "{":
            guard let (lo, hi, end) = counted(i) else { return atom }
            guard lo <= 1000, (hi ?? lo) <= 1000, hi.map({ $0 >= lo }) ?? true else { return nil }
            node = .repeatNode(atom, min: lo, max: hi)
            i = end
        default: return atom
        }
        if case .empty = atom { return nil }
        if i < p.count, p[i] == "?" { i += 1 }   // lazy: same answer for a full match
        // Stacked repetition is rejected by RE2 (the translator already refuses it).
        if i < p.count, p[i] == "*" || p[i] == "+" || (p[i] == "{" && counted(i) != nil) { return nil }
        return node
    }

    /// `{n}`, `{n,}` or `{n,m}` at position j: (n, m or nil for unbounded, index after `}`).
    private func counted(_ j: Int) -> (Int, Int?, Int)? {
        var k = j + 1
        var lo = 0, digits = 0
        while k < p.count, let d = digit(p[k]) { lo = min(lo * 10 + d, 100_000); k += 1; digits += 1 }
        guard digits > 0, k < p.count else { return nil }
        if p[k] == "}" { return (lo, lo, k + 1) }
        guard p[k] == "," else { return nil }
        k += 1
        var hi = 0
        digits = 0
        while k < p.count, let d = digit(p[k]) { hi = min(hi * 10 + d, 100_000); k += 1; digits += 1 }
        guard k < p.count, p[k] == "}" else { return nil }
        return (lo, digits == 0 ? nil : hi, k + 1)
    }

    private func digit(_ c: Unicode.Scalar) -> Int? {
        c.value >= 0x30 && c.value <= 0x39 ? Int(c.value - 0x30) : nil
    }

    private mutating func atom() -> RegexNode? {
        let c = p[i]
        switch c {
        case "(":
            return group()
        case "[":
            i += 1
            return charClass().map { .cls($0) }
        case ".":
            i += 1
            return .any(dotAll: dotAll)
        case "^":
            i += 1
            return multiLine ? .beginLine : .beginText
        case "$":
            i += 1
            return multiLine ? .endLine : .endText
        case "\\":
            return escape(inClass: false).flatMap { e in
                switch e {
                case .scalar(let s): return .char(s)
                case .cls(let k): return .cls(k)
                case .beginText: return .beginText
                case .endText: return .endText
                }
            }
        case "*", "+", "?":
            return nil
        case "}":
            // RE2 reads a lone `}` as itself but the ICU path rejects it; ICU keeps deciding.
            return nil
        case "{":
            if counted(i) != nil { return nil }
            i += 1
            return .char(c.value)
        default:
            i += 1
            return .char(c.value)
        }
    }

    private mutating func group() -> RegexNode? {
        i += 1
        let savedDotAll = dotAll, savedMultiLine = multiLine
        if i < p.count, p[i] == "?" {
            i += 1
            if i < p.count, p[i] == "P" { i += 1 }
            if i < p.count, p[i] == "<" {
                // Named capture: skip the name.
                i += 1
                while i < p.count, p[i] != ">" { i += 1 }
                guard i < p.count else { return nil }
                i += 1
            } else {
                // Flags: (?sm) for the rest of the enclosing group, (?sm:…) for the group.
                var negate = false
                while i < p.count, p[i] != ")", p[i] != ":" {
                    switch p[i] {
                    case "s": dotAll = !negate
                    case "m": multiLine = !negate
                    case "-": negate = true
                    default: return nil   // i, U, …: not implemented here
                    }
                    i += 1
                }
                guard i < p.count else { return nil }
                if p[i] == ")" {
                    i += 1
                    return .empty
                }
                i += 1   // ':'
            }
        }
        groupDepth += 1
        guard let inner = alternation(), i < p.count, p[i] == ")" else { return nil }
        groupDepth -= 1
        i += 1
        dotAll = savedDotAll
        multiLine = savedMultiLine
        return inner
    }

    private enum Escape {
        case scalar(UInt32)
        case cls(NativeRegex.CharClass)
        case beginText, endText
    }

    private static let digits = NativeRegex.CharClass(ranges: [0x30...0x39], negated: false)
    private static let word = NativeRegex.CharClass(ranges: [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A], negated: false)
    private static let space = NativeRegex.CharClass(ranges: [0x09...0x0A, 0x0C...0x0D, 0x20...0x20], negated: false)

    private mutating func escape(inClass: Bool) -> Escape? {
        guard i + 1 < p.count else { return nil }
        let e = p[i + 1]
        i += 2
        switch e {
        case "d": return .cls(RegexParser.digits)
        case "D": return .cls(.init(ranges: RegexParser.digits.ranges, negated: true))
        case "w": return .cls(RegexParser.word)
        case "W": return .cls(.init(ranges: RegexParser.word.ranges, negated: true))
        case "s": return .cls(RegexParser.space)
        case "S": return .cls(.init(ranges: RegexParser.space.ranges, negated: true))
        case "n": return .scalar(0x0A)
        case "t": return .scalar(0x09)
        case "r": return .scalar(0x0D)
        case "f": return .scalar(0x0C)
        case "v": return .scalar(0x0B)
        case "a": return .scalar(0x07)
        case "A": return inClass ? nil : .beginText
        case "z": return inClass ? nil : .endText
        case "x":
            var value: UInt32 = 0
            if i < p.count, p[i] == "{" {
                i += 1
                var n = 0
                while i < p.count, p[i] != "}", let h = hex(p[i]) { value = value * 16 + h; i += 1; n += 1; if n > 6 { return nil } }
                guard n > 0, i < p.count, p[i] == "}" else { return nil }
                i += 1
            } else {
                for _ in 0..<2 {
                    guard i < p.count, let h = hex(p[i]) else { return nil }
                    value = value * 16 + h
                    i += 1
                }
            }
            guard value <= 0x10FFFF else { return nil }
            return .scalar(value)
        default:
            // Escaped punctuation is itself; letters and digits are classes or features not done here.
            let v = e.value
            if v < 0x80, !((v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)) {
                return .scalar(v)
            }
            return nil
        }
    }

    private func hex(_ c: Unicode.Scalar) -> UInt32? {
        switch c.value {
        case 0x30...0x39: c.value - 0x30
        case 0x41...0x46: c.value - 0x41 + 10
        case 0x61...0x66: c.value - 0x61 + 10
        default: nil
        }
    }

    /// After `[`: the class up to `]`.
    private mutating func charClass() -> NativeRegex.CharClass? {
        var negated = false
        if i < p.count, p[i] == "^" { negated = true; i += 1 }
        var ranges: [ClosedRange<UInt32>] = []
        var first = true
        while i < p.count {
            let c = p[i]
            if c == "]", !first { i += 1; return NativeRegex.CharClass(ranges: normalize(ranges), negated: negated) }
            first = false
            if c == "[", i + 1 < p.count, p[i + 1] == ":" { return nil }   // POSIX classes: ICU
            var lo: UInt32
            if c == "\\" {
                guard let e = escape(inClass: true) else { return nil }
                switch e {
                case .scalar(let s): lo = s
                case .cls(let k):
                    ranges.append(contentsOf: k.negated ? complement(k.ranges) : k.ranges)
                    continue
                default: return nil
                }
            } else {
                lo = c.value
                i += 1
            }
            // A range a-z (a '-' before ']' is a literal).
            if i + 1 < p.count, p[i] == "-", p[i + 1] != "]" {
                i += 1
                var hi: UInt32
                if p[i] == "\\" {
                    guard case .scalar(let s)? = escape(inClass: true) else { return nil }
                    hi = s
                } else {
                    hi = p[i].value
                    i += 1
                }
                guard lo <= hi else { return nil }
                ranges.append(lo...hi)
            } else {
                ranges.append(lo...lo)
            }
        }
        return nil
    }

    private func normalize(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var out: [ClosedRange<UInt32>] = []
        for r in sorted {
            if let last = out.last, r.lowerBound <= last.upperBound &+ 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }

    private func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var out: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for r in normalize(ranges) {
            if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
            next = r.upperBound + 1
        }
        if next <= 0x10FFFF { out.append(next...0x10FFFF) }
        return out
    }
}

private struct NFABuilder {
    var program: [NativeRegex.Inst] = []
    var classes: [NativeRegex.CharClass] = []
    static let maxInstructions = 20_000

    /// Appends the code for n; false when the program grows too large.
    mutating func emit(_ n: RegexNode) -> Bool {
        guard program.count < NFABuilder.maxInstructions else { return false }
        switch n {
        case .empty: break
        case .char(let c): program.append(.char(c))
        case .any(let dotAll): program.append(dotAll ? .any : .anyNotNewline)
        case .cls(let k):
            classes.append(k)
            program.append(.cls(classes.count - 1))
        case .beginLine: program.append(.beginLine)
        case .endLine: program.append(.endLine)
        case .beginText: program.append(.beginText)
        case .endText: program.append(.endText)
        case .concat(let items):
            for x in items where !emit(x) { return false }
        case .alternate(let branches):
            // split L1, next; L1: a; jump end; next: split …
            var jumps: [Int] = []
            for (k, b) in branches.enumerated() {
                if k < branches.count - 1 {
                    let split = program.count
                    program.append(.split(0, 0))
                    guard emit(b) else { return false }
                    jumps.append(program.count)
                    program.append(.jump(0))
                    program[split] = .split(Int32(split + 1), Int32(program.count))
                } else {
                    guard emit(b) else { return false }
                }
            }
            for j in jumps { program[j] = .jump(Int32(program.count)) }
        case .repeatNode(let x, let lo, let hi):
            for _ in 0..<lo where !emit(x) { return false }
            if let hi {
                // (x(x(x)?)?)? for the optional copies.
                var splits: [Int] = []
                for _ in lo..<hi {
                    splits.append(program.count)
                    program.append(.split(0, 0))
                    guard emit(x) else { return false }
                }
                for s in splits { program[s] = .split(Int32(s + 1), Int32(program.count)) }
            } else {
                // L: split body, end; body; jump L
                let split = program.count
                program.append(.split(0, 0))
                guard emit(x) else { return false }
                program.append(.jump(Int32(split)))
                program[split] = .split(Int32(split + 1), Int32(program.count))
            }
        }
        return program.count < NFABuilder.maxInstructions
    }
}
