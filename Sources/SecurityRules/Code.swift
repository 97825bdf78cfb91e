// The evaluator's form of a checked program: every expression node becomes one trivially copyable
// instruction in an array indexed by node id, with children referenced by index. Walking it costs
// no reference counting, where the tree of indirect enums paid a retain and a release for every
// child it visited (a third of a decision's time on the shipped rules).

/// One expression, its operands referenced by node id (`-1` for an absent optional operand).
/// Payloads are plain integers and payload-free enums, so copying an `Op` is a memory copy.
enum Op {
    /// `Code.constants[i]`.
    case constant(Int32)
    /// Items are `Code.operands[start..<start + count]`.
    case list(start: Int32, count: Int32)
    /// Key and value ids alternate in `Code.operands[start..<start + 2 * count]`.
    case map(start: Int32, count: Int32)
    /// `Code.paths[i]`.
    case path(Int32)
    case local(Int32)
    case pathVariable(Int32)
    case request(RequestField?)
    case resource
    /// `Code.names[i]`.
    case unknownVariable(Int32)
    /// `base.<Code.names[name]>`.
    case member(base: Int32, name: Int32)
    case index(base: Int32, index: Int32)
    case slice(base: Int32, low: Int32, high: Int32)
    case method(base: Int32, Method, start: Int32, count: Int32)
    case unknownMethod(base: Int32, name: Int32)
    /// Fails with `Code.names[message]` once `base` is evaluated.
    case failingCall(base: Int32, message: Int32)
    /// `base.matches(<Code.regexes[i]>)`.
    case matchesConstant(base: Int32, regex: Int32)
    case builtin(Builtin, start: Int32, count: Int32)
    case call(function: Int32, start: Int32, count: Int32)
    case not(Int32)
    case negate(Int32)
    case binary(BinaryOperator, Int32, Int32)
    case and(Int32, Int32)
    case or(Int32, Int32)
    case ternary(Int32, Int32, Int32)
    case isType(Int32, TypeName)
}

/// A function in code form: its lets are `Code.operands[letStart..<letStart + letCount]`.
struct FunctionCode {
    var letStart: Int32
    var letCount: Int32
    var body: Int32
}

/// A path-literal part in code form.
enum CodePathPart: Sendable {
    case text(String)
    case expr(Int32)
}

/// The instructions and the tables they index. Immutable once built.
final class Code: @unchecked Sendable {   // Sendable: the buffers are written only in init.
    /// Indexed by node id.
    let ops: UnsafeMutableBufferPointer<Op>
    /// Operand lists of lists, maps, calls and methods.
    let operands: UnsafeMutableBufferPointer<Int32>
    /// Indexed like `Program.functions`.
    let functions: UnsafeMutableBufferPointer<FunctionCode>
    let constants: UnsafeMutableBufferPointer<RulesValue>
    let names: [String]
    let paths: [[[CodePathPart]]]
    let regexes: [CompiledRegex]
    /// Indexed like `regexes`: for `s.lower().matches('…')`, the native matcher that reads `s`
    /// lowered (`NativeRegex.loweringInput`), so a decision without recording never builds the
    /// lowered string; nil elsewhere, and where the pattern needs NSRegularExpression.
    let loweringRegexes: [NativeRegex?]

    /// Lowers every tree in `roots` (allow conditions) and every function; ids of nodes nothing
    /// reaches stay `null` constants.
    init(nodeCount: Int, roots: [Node], functions checked: [CheckedFunction]) {
        var builder = Builder()
        builder.constants.append(.null)
        builder.ops = Array(repeating: .constant(0), count: nodeCount)
        for root in roots { builder.lower(root) }
        var functionCode: [FunctionCode] = []
        for f in checked {
            let (start, count) = builder.operandRun(f.lets)
            builder.lower(f.body)
            functionCode.append(FunctionCode(letStart: start, letCount: count, body: f.body.id))
        }
        functions = .allocate(capacity: max(functionCode.count, 1))
        _ = functions.initialize(from: functionCode)
        ops = .allocate(capacity: max(nodeCount, 1))
        _ = ops.initialize(from: builder.ops)
        operands = .allocate(capacity: max(builder.operands.count, 1))
        _ = operands.initialize(from: builder.operands)
        constants = .allocate(capacity: builder.constants.count)
        _ = constants.initialize(from: builder.constants)
        names = builder.names
        paths = builder.paths
        regexes = builder.regexes
        loweringRegexes = builder.loweringRegexes
    }

    deinit {
        ops.deallocate()
        operands.deallocate()
        functions.deallocate()
        constants.deinitialize()
        constants.deallocate()
    }

    private struct Builder {
        var ops: [Op] = []
        var operands: [Int32] = []
        var constants: [RulesValue] = []
        var names: [String] = []
        var nameIndex: [String: Int32] = [:]
        var paths: [[[CodePathPart]]] = []
        var regexes: [CompiledRegex] = []
        var loweringRegexes: [NativeRegex?] = []

        mutating func name(_ s: String) -> Int32 {
            if let i = nameIndex[s] { return i }
            names.append(s)
            nameIndex[s] = Int32(names.count - 1)
            return Int32(names.count - 1)
        }

        /// Lowers the nodes first, then reserves their ids as one contiguous operand run.
        mutating func operandRun(_ nodes: [Node]) -> (Int32, Int32) {
            for n in nodes { lower(n) }
            let start = Int32(operands.count)
            operands.append(contentsOf: nodes.map(\.id))
            return (start, Int32(nodes.count))
        }

        mutating func lower(_ node: Node) {
            let op: Op
            switch node {
            case .constant(_, let v):
                constants.append(v)
                op = .constant(Int32(constants.count - 1))
            case .list(_, let items):
                let (s, c) = operandRun(items)
                op = .list(start: s, count: c)
            case .map(_, let entries):
                let (s, _) = operandRun(entries.flatMap { [$0.0, $0.1] })
                op = .map(start: s, count: Int32(entries.count))
            case .path(_, let segments):
                let parts = segments.map { seg in
                    seg.map { part -> CodePathPart in
                        switch part {
                        case .text(let t): return .text(t)
                        case .expr(let e):
                            lower(e)
                            return .expr(e.id)
                        }
                    }
                }
                paths.append(parts)
                op = .path(Int32(paths.count - 1))
            case .local(_, let slot): op = .local(Int32(slot))
            case .pathVariable(_, let i): op = .pathVariable(Int32(i))
            case .request(_, let field): op = .request(field)
            case .resource: op = .resource
            case .unknownVariable(_, let n): op = .unknownVariable(name(n))
            case .member(_, let base, let n):
                lower(base)
                op = .member(base: base.id, name: name(n))
            case .index(_, let base, let i):
                lower(base)
                lower(i)
                op = .index(base: base.id, index: i.id)
            case .slice(_, let base, let lo, let hi):
                lower(base)
                if let lo { lower(lo) }
                if let hi { lower(hi) }
                op = .slice(base: base.id, low: lo?.id ?? -1, high: hi?.id ?? -1)
            case .method(_, let base, let m, let args):
                lower(base)
                let (s, c) = operandRun(args)
                op = .method(base: base.id, m, start: s, count: c)
            case .unknownMethod(_, let base, let n):
                lower(base)
                op = .unknownMethod(base: base.id, name: name(n))
            case .failingCall(_, let base, let message):
                lower(base)
                op = .failingCall(base: base.id, message: name(message))
            case .matchesConstant(_, let base, let regex):
                lower(base)
                regexes.append(regex)
                if case .method(_, _, .lower, let args) = base, args.isEmpty {
                    loweringRegexes.append(regex.native?.loweringInput())
                } else {
                    loweringRegexes.append(nil)
                }
                op = .matchesConstant(base: base.id, regex: Int32(regexes.count - 1))
            case .builtin(_, let b, let args):
                let (s, c) = operandRun(args)
                op = .builtin(b, start: s, count: c)
            case .call(_, let f, let args):
                let (s, c) = operandRun(args)
                op = .call(function: Int32(f), start: s, count: c)
            case .not(_, let x):
                lower(x)
                op = .not(x.id)
            case .negate(_, let x):
                lower(x)
                op = .negate(x.id)
            case .binary(_, let o, let l, let r):
                lower(l)
                lower(r)
                op = .binary(o, l.id, r.id)
            case .and(_, let l, let r):
                lower(l)
                lower(r)
                op = .and(l.id, r.id)
            case .or(_, let l, let r):
                lower(l)
                lower(r)
                op = .or(l.id, r.id)
            case .ternary(_, let c, let y, let n):
                lower(c)
                lower(y)
                lower(n)
                op = .ternary(c.id, y.id, n.id)
            case .isType(_, let x, let t):
                lower(x)
                op = .isType(x.id, t)
            }
            ops[Int(node.id)] = op
        }
    }
}
