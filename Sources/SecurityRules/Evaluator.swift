// The evaluator: judges one request against a checked program.
//
// Errors are values (Swift typed throws carry them): `false && e` is false and `true || e` is
// true whatever e is, as in CEL; anything else that meets an error is an error, and an error that
// reaches an allow condition makes that statement false. Limit errors (document accesses,
// expressions per request) are fatal: they deny the whole request.

import HearthCore

/// Serves get()/exists()/getAfter()/existsAfter(); the test runner's mocks implement it too.
protocol DocumentAccessor {
    /// The call's result (a resource map or null for get/getAfter, a bool for exists/existsAfter).
    func access(_ function: Builtin, _ path: [String]) -> Result<RulesValue, EvalError>
}

/// Adapts the public lookup protocol.
struct LookupAccessor: DocumentAccessor {
    let lookup: any RulesDocumentLookup

    func access(_ function: Builtin, _ path: [String]) -> Result<RulesValue, EvalError> {
        switch function {
        case .get, .firestoreGet: return .success(lookup.get(path) ?? .null)
        case .getAfter: return .success(lookup.getAfter(path) ?? .null)
        case .exists, .firestoreExists: return .success(.bool(lookup.get(path) != nil))
        default: return .success(.bool(lookup.getAfter(path) != nil))
        }
    }
}

/// Where an evaluation's get()/exists() go: the caller's lookup itself, or an accessor (the test
/// runner's mocks). An enum, not a `LookupAccessor` in an `any DocumentAccessor`: that wrapper
/// (five words) did not fit an existential's inline buffer, so every decision allocated a box for
/// it, and wrapping the lookup generically instead cost a runtime metadata lookup per decision.
enum DocumentSource {
    case lookup(any RulesDocumentLookup)
    case accessor(any DocumentAccessor)

    func access(_ function: Builtin, _ path: [String]) -> Result<RulesValue, EvalError> {
        switch self {
        case .lookup(let lookup): return LookupAccessor(lookup: lookup).access(function, path)
        case .accessor(let accessor): return accessor.access(function, path)
        }
    }
}

/// A value or an error, as recorded in a trace.
enum TracedRaw: Sendable {
    case value(RulesValue)
    case error(EvalError)
}

/// One match block instance that covers the request path, with its bindings.
struct MatchInstance {
    var block: CheckedMatch
    /// The bindings, when the walk made them. Empty when `positional`: each variable is then the
    /// request path's segment at `block.positions` (`Evaluation.bindings(of:)`).
    var stored: [RulesValue]
    var positional: Bool
    var names: [String] { block.allVariableNames }
    var pattern: String { block.pattern }
}

/// One allow statement tried.
struct AllowAttempt {
    var allow: CheckedAllow
    var instance: Int
    var result: TracedRaw?
    var visited: Range<Int>
}

/// A struct, not a class: its arrays are mutated on every node, and a class's stored properties
/// pay a dynamic exclusivity check per access (measured at ~13% of an evaluation).
struct Evaluation {
    static let maxCallDepth = 20
    static let maxExpressions = 1000

    let program: Program
    let request: RulesRequest
    let accessor: DocumentSource
    /// The program's code. Its buffers are also held directly: they are trivial to copy, so
    /// reading an instruction retains nothing (reading through `code` retained it around calls).
    let code: Code
    private let ops: UnsafeMutableBufferPointer<Op>
    private let operands: UnsafeMutableBufferPointer<Int32>
    private let constants: UnsafeMutableBufferPointer<RulesValue>
    private let functionCode: UnsafeMutableBufferPointer<FunctionCode>
    /// Whether every visited expression's value is kept (traces, coverage, test reports). A plain
    /// decision runs without it and is re-run with it only when it must explain a denial.
    let recording: Bool
    /// Coverage's offer (recording for coverage only): a visited value it offers is counted in
    /// `hits` instead of kept in `visited`, so `visited` is then not every visit — a denial is
    /// judged again for its trace.
    let hints: CoverageHints?
    /// `hints`' offers, read without retaining `hints` (which this evaluation holds).
    private let offers: CoverageHints.Offers
    /// Whether a grant keeps its allow attempt. Only a trace with details reads a granted
    /// request's attempts (`TraceBuilder`); without one, appending the granting attempt allocated
    /// the array on most grants (the first allow tried) for nothing.
    var grantDetails = true

    private var bindings: [RulesValue] = []
    /// The running instance's variable places in the request path, when it binds by position
    /// (`MatchInstance.positional`); `bindings` otherwise.
    private var positions: [Int32]?
    /// One stack for every call's parameters and lets; `frameBase` is the running call's first slot.
    private var locals: [RulesValue] = []
    /// Lets whose value is an error, by their index in `locals` (which holds null for them): the
    /// error is the call's only when the body reads the let, as on the official emulator
    /// (`let bad = 1 / 0; return true;` is true there).
    private var letErrors: [Int: EvalError] = [:]
    private var frameBase = 0
    private var callDepth = 0
    private var expressionCount = 0
    private var documentsRead = Set<DocumentKey>()
    private var callCache: [CallKey: RulesValue] = [:]
    private var wholeRequest: RulesValue?
    /// The last map whose key list was built while recording, and that list.
    private var lastKeys: (storage: UInt, map: RulesMap, list: RulesValue)?

    private(set) var visited: [Visit] = []
    /// Visits counted through `hints`: `visited.count` at the visit in the high 32 bits, the
    /// table slot (node × `RulesCoverage.distinctValuesPerExpression` + entry) in the low ones.
    private(set) var hits: [UInt64] = []
    private(set) var debugMessages: [String] = []
    private(set) var functionCalls: [(String, [RulesValue])] = []
    private(set) var instances: [MatchInstance] = []
    private(set) var attempts: [AllowAttempt] = []
    private(set) var fatal: EvalError?

    // Paths as their segments' bytes: `get(/d/\u00e9)` and `get(/d/e\u0301)` are two documents.
    private struct DocumentKey: Hashable { var after: Bool; var path: [ExactString]
        init(after: Bool, path: [String]) { self.after = after; self.path = path.map { ExactString($0) } } }
    private struct CallKey: Hashable { var function: String; var path: [ExactString]
        init(function: String, path: [String]) { self.function = function; self.path = path.map { ExactString($0) } } }

    init(program: Program, request: RulesRequest, accessor: any DocumentAccessor, recording: Bool = true,
         hints: CoverageHints? = nil) {
        self.init(program: program, request: request, source: .accessor(accessor), recording: recording, hints: hints)
    }

    init(program: Program, request: RulesRequest, source: DocumentSource, recording: Bool = true,
         hints: CoverageHints? = nil) {
        self.program = program
        self.request = request
        self.accessor = source
        self.recording = recording
        self.hints = recording ? hints : nil
        offers = self.hints?.offers ?? .none
        self.code = program.code
        ops = program.code.ops
        operands = program.code.operands
        constants = program.code.constants
        functionCode = program.code.functions
        // `visited` is reserved at its first visit (`appendVisit`): with coverage's offers a
        // decision often keeps none, and reserving 128 up front cost an allocation of ~7 KiB.
        // 120, not 128: 120 hits and the array's header fit the allocator's per-thread cache of
        // small blocks (glibc's tcache, up to 1,032 bytes), 128 did not (a create counts ~80).
        if self.hints != nil { hits.reserveCapacity(120) }
    }

    /// Runs the request; true when some allow statement grants it.
    mutating func run() -> Bool {
        if program.positionalMatching {
            for b in program.matches { matchPositional(b, 0, 0) }
        } else {
            var bs: [RulesValue] = []
            bs.reserveCapacity(8)
            for b in program.matches { matchSegments(b, 0, 0, &bs) }
            if let placeholder = request.listPlaceholder { unbind(placeholder) }
        }
        let wanted = MethodSet(request.method)
        for (i, instance) in instances.enumerated() {
            // The allows' methods and condition ids (trivial values): iterating the allows
            // themselves copied each (a retain and a release of its names and its condition tree).
            let plan = instance.block.allowPlan
            for k in plan.indices where plan[k].methods.contains(wanted) {
                if instance.positional {
                    positions = instance.block.positions
                } else {
                    positions = nil
                    bindings = instance.stored
                }
                let start = visited.count
                let condition = plan[k].condition
                guard condition >= 0 else {
                    if grantDetails {
                        attempts.append(AllowAttempt(allow: instance.block.allows[k], instance: i, result: .value(.bool(true)), visited: start..<start))
                    }
                    return true
                }
                do throws(EvalError) {
                    let v = try eval(condition)
                    if case .bool(true) = v {
                        if grantDetails {
                            attempts.append(AllowAttempt(allow: instance.block.allows[k], instance: i, result: .value(v), visited: start..<visited.count))
                        }
                        return true
                    }
                    attempts.append(AllowAttempt(allow: instance.block.allows[k], instance: i, result: .value(v), visited: start..<visited.count))
                } catch {
                    attempts.append(AllowAttempt(allow: instance.block.allows[k], instance: i, result: .error(error), visited: start..<visited.count))
                    if error.fatal {
                        fatal = error
                        return false
                    }
                }
            }
        }
        return false
    }

    /// Evaluates a node with the given path bindings (expression probes in tests and tools).
    mutating func evaluate(_ node: Node, bindings: [RulesValue]) throws(EvalError) -> RulesValue {
        self.bindings = bindings
        positions = nil
        return try eval(node.id)
    }

    // MARK: Matching

    /// A list's placeholder document id is no id: a `{wildcard}` that took it holds an unknown string.
    private mutating func unbind(_ placeholder: String) {
        for i in instances.indices {
            for k in instances[i].stored.indices where instances[i].stored[k] == .string(placeholder) {
                instances[i].stored[k] = Evaluation.anyDocumentID
            }
        }
    }

    /// Variable `index` of a positional instance whose places are `positions`: the path's segment,
    /// or for a list's placeholder id what `unbind` makes of it.
    @inline(__always)
    private func positional(_ positions: [Int32], _ index: Int) -> RulesValue {
        let segment = RulesValue.string(request.path[Int(positions[index])])
        if let placeholder = request.listPlaceholder, segment == .string(placeholder) { return Evaluation.anyDocumentID }
        return segment
    }

    /// An instance's bindings, in `names`' order (for traces).
    func bindings(of instance: MatchInstance) -> [RulesValue] {
        guard instance.positional, let positions = instance.block.positions else { return instance.stored }
        return positions.indices.map { positional(positions, $0) }
    }

    /// `matchSegments` for a program without recursive wildcards: the same walk, in the same
    /// order, comparing segments alike, but nothing is bound (every variable is a segment at a
    /// place its block knows), so no array is built per match.
    private mutating func matchPositional(_ b: CheckedMatch, _ si: Int, _ pos: Int) {
        let path = request.path
        var si = si, pos = pos
        while si < b.segments.count {
            switch b.segments[si] {
            case .literal(let s):
                guard pos < path.count, path[pos] == s else { return }
            case .single:
                guard pos < path.count else { return }
            case .recursive:
                preconditionFailure("a positional program has no recursive wildcard")
            }
            si += 1
            pos += 1
        }
        if pos == path.count { instances.append(MatchInstance(block: b, stored: [], positional: true)) }
        for child in b.children { matchPositional(child, 0, pos) }
    }

    private mutating func matchSegments(_ b: CheckedMatch, _ si: Int, _ pos: Int, _ bs: inout [RulesValue]) {
        let path = request.path
        if si == b.segments.count {
            if pos == path.count {
                // A copy of its own, so `bs` stays uniquely owned while the walk goes on.
                instances.append(MatchInstance(block: b, stored: Array(unsafeUninitializedCapacity: bs.count) { buffer, count in
                    count = buffer.initialize(fromContentsOf: bs)
                }, positional: false))
            }
            for child in b.children { matchSegments(child, 0, pos, &bs) }
            return
        }
        switch b.segments[si] {
        case .literal(let s):
            guard pos < path.count, path[pos] == s else { return }
            matchSegments(b, si + 1, pos + 1, &bs)
        case .single:
            guard pos < path.count else { return }
            bs.append(.string(path[pos]))
            matchSegments(b, si + 1, pos + 1, &bs)
            bs.removeLast()
        case .recursive:
            // v2: zero or more segments; v1: one or more. Longest first, backtracking for what follows.
            let minimum = program.version == 1 ? 1 : 0
            var len = path.count - pos
            while len >= minimum {
                bs.append(.path(Array(path[pos..<(pos + len)])))
                matchSegments(b, si + 1, pos + len, &bs)
                bs.removeLast()
                len -= 1
            }
        }
    }

    // MARK: Expressions

    /// Evaluates node `id`, counting it toward the per-request limit and recording its outcome.
    mutating func eval(_ id: Int32) throws(EvalError) -> RulesValue {
        let op = ops[Int(id)]
        if case .constant(let c) = op { return constants[Int(c)] }
        // Counted here, not through `count(_:)`: this is every node's path, with or without
        // recording, and the call was not inlined (+1.3k instructions per create decision).
        expressionCount += 1
        if expressionCount > Evaluation.maxExpressions {
            var e = EvalError("Exceeded the maximum of \(Evaluation.maxExpressions) expressions evaluated for a request.", fatal: true)
            e.nodeID = id
            throw e
        }
        // Without recording, an error's node only matters to a trace, and a denial is re-run with
        // recording to build one: no bookkeeping per node.
        guard recording else { return try evaluate(op) }
        do throws(EvalError) {
            let v = try evaluate(op)
            keep(id, v)
            return v
        } catch {
            throw failed(error, at: id)
        }
    }

    /// Records that node `id` evaluated to `v`: counted at once when coverage offers that value
    /// (`hints`), kept in `visited` otherwise.
    @inline(__always)
    private mutating func keep(_ id: Int32, _ v: RulesValue) {
        let entry = offers.entry(id, v)
        if entry >= 0 {
            hit(id, entry)
            return
        }
        appendVisit(Visit(id, .value(v)))
    }

    /// Appends a visit, reserving room for a request's visits at the first.
    @inline(__always)
    private mutating func appendVisit(_ visit: Visit) {
        if visited.capacity == 0 { visited.reserveCapacity(128) }
        visited.append(visit)
    }

    @inline(__always)
    private mutating func hit(_ id: Int32, _ entry: Int) {
        let slot = UInt64(UInt32(id)) &* UInt64(RulesCoverage.distinctValuesPerExpression) &+ UInt64(entry)
        hits.append(UInt64(visited.count) << 32 | slot)
    }

    /// Counts node `id` toward the per-request limit of expressions.
    @inline(__always)
    private mutating func count(_ id: Int32) throws(EvalError) {
        expressionCount += 1
        if expressionCount > Evaluation.maxExpressions { throw Evaluation.tooManyExpressions(id) }
    }

    /// The fatal error of the expression past the limit, node `id`.
    @inline(never)
    private static func tooManyExpressions(_ id: Int32) -> EvalError {
        var e = EvalError("Exceeded the maximum of \(Evaluation.maxExpressions) expressions evaluated for a request.", fatal: true)
        e.nodeID = id
        return e
    }

    /// Records that node `id` failed with `error` (recording only) and returns the error as it
    /// leaves the node: attributed to the node where it arose.
    private mutating func failed(_ error: EvalError, at id: Int32) -> EvalError {
        var e = error
        if e.nodeID < 0 {
            e.nodeID = id
            if e.unproven {
                // As the emulator words a list condition its query's constraints do not prove.
                let start = program.nodes[Int(id)].range.start
                e.message = "evaluation error at L\(start.line):\(start.column)"
            }
        }
        appendVisit(Visit(id, .error(e)))
        return e
    }

    /// The values of an operand run, in order.
    private mutating func evalOperands(_ start: Int32, _ count: Int32) throws(EvalError) -> [RulesValue] {
        var values: [RulesValue] = []
        values.reserveCapacity(Int(count))
        for k in Int(start)..<Int(start + count) { values.append(try eval(operands[k])) }
        return values
    }

    private mutating func evaluate(_ op: Op) throws(EvalError) -> RulesValue {
        switch op {
        case .constant(let c):
            return constants[Int(c)]
        case .list(let start, let count):
            return .list(try evalOperands(start, count))
        case .map(let start, let count):
            var out = RulesMap()
            for k in 0..<Int(count) {
                let at = Int(start) + 2 * k
                guard case .string(let key) = try eval(operands[at]) else { throw EvalError("Map keys must be strings.") }
                out[key] = try eval(operands[at + 1])
            }
            return .map(out)
        case .path(let index):
            var out: [String] = []
            var names: RulesPathNames?
            for parts in code.paths[Int(index)] {
                if parts.count == 1, case .expr(let e) = parts[0] {
                    let v = try eval(e)
                    if case .path(let p, let bound) = v {
                        // A bound path keeps its variables' names at their new places (`(/q/$(p)).x`).
                        if let bound { names = RulesPathNames.joined(names, bound.shifted(by: out.count)) }
                        out.append(contentsOf: p)
                        continue
                    }
                    out.append(try Evaluation.segmentText(v))
                    continue
                }
                var text = ""
                for part in parts {
                    switch part {
                    case .text(let t): text += t
                    case .expr(let e): text += try Evaluation.segmentText(try eval(e))
                    }
                }
                out.append(text)
            }
            return .path(out, names: names)
        case .local(let slot):
            let i = frameBase + Int(slot)
            if !letErrors.isEmpty, let e = letErrors[i] { throw e }
            return locals[i]
        case .pathVariable(let index):
            if let positions { return positional(positions, Int(index)) }
            return bindings[Int(index)]
        case .request(let field):
            switch field {
            case .auth: return request.auth ?? .null
            case .method: return .string(request.method.rawValue)
            case .path: return .path(request.path)
            case .time: return request.time
            case .resource:
                if request.methodShaped, request.method == .get || request.method == .list { throw EvalError.missingProperty("resource") }
                return request.requestResource ?? .null
            case .query:
                if request.methodShaped, request.method != .list { throw EvalError.missingProperty("query") }
                return request.query ?? .null
            case nil: return requestMap()
            }
        case .resource:
            return request.resource ?? .null
        case .unknownVariable(let name):
            throw EvalError("Variable not found: \(code.names[Int(name)]).")
        case .member(let base, let name):
            // `param.field` (the schema functions' `data.status`): the local is counted and
            // recorded as `eval` counts and records it (reading a local cannot fail), then read in
            // place, not copied out through a call of its own.
            if case .local(let slot) = ops[Int(base)] {
                try count(base)
                if !letErrors.isEmpty, let e = letErrors[frameBase + Int(slot)] { throw e }
                guard recording else { return try Evaluation.member(locals[frameBase + Int(slot)], code.names[Int(name)]) }
                let b = locals[frameBase + Int(slot)]
                keep(base, b)
                return try Evaluation.member(b, code.names[Int(name)])
            }
            let b = try eval(base)
            return try Evaluation.member(b, code.names[Int(name)])
        case .index(let base, let index):
            let b = try eval(base)
            let i = try eval(index)
            return try Evaluation.index(b, i)
        case .slice(let base, let lo, let hi):
            let b = try eval(base)
            let lv: RulesValue = lo < 0 ? .null : try eval(lo)
            let hv: RulesValue = hi < 0 ? .null : try eval(hi)
            let (l, h) = try Evaluation.sliceBounds(b, lv, hv)
            switch b {
            case .list(let items):
                let (a, z) = try CollectionFunctions.bounds(l, h, items.count)
                return .list(Array(items[a..<z]))
            case .string(let s): return try StringFunctions.slice(s, l, h)
            case .path(let p, let names):
                try RulesValue.requireBound(p)
                let (a, z) = try CollectionFunctions.bounds(l, h, p.count)
                return .path(Array(p[a..<z]), names: names?.sliced(a..<z))
            case .null: throw EvalError.nullValue
            default: throw EvalError.unsupported("[:] on ", b)
            }
        case .method(let base, let m, let start, let count):
            // `map.keys().hasAll/hasOnly/hasAny([...])`, the commonest schema check, answered from the
            // map without building and sorting the key list (only when no trace needs keys()'s value).
            if m == .hasAll || m == .hasOnly || m == .hasAny, case .method(let inner, .keys, _, let none) = ops[Int(base)] {
                if !recording { return try keysHave(inner, m, operands[Int(start)]) }
                if none == 0, count == 1 { return try keysHaveRecorded(base, inner, m, operands[Int(start)]) }
            }
            let recv = try eval(base)
            return try Methods.call(m, recv, try evalOperands(start, count))
        case .matchesConstant(let base, let regex):
            // `s.lower().matches('…')` without recording: a twin of the matcher whose table reads
            // A–Z as a–z (`Code.loweringRegexes`) runs on s itself, so the lowered copy of the
            // string is never built. The lower() node is counted as `eval` counts it; a receiver
            // that is not a string, or a pattern left to NSRegularExpression, takes the general
            // path, with its errors.
            if !recording, case .method(let inner, .lower, _, 0) = ops[Int(base)] {
                try count(base)
                let recv = try eval(inner)
                if case .string(let s) = recv, let lowering = code.loweringRegexes[Int(regex)] { return .bool(lowering.fullMatch(s)) }
                let lowered = try Methods.call(.lower, recv, [])
                guard case .string(let s) = lowered else { throw EvalError.noFunction("matches", on: lowered) }
                return .bool(code.regexes[Int(regex)].fullMatch(s))
            }
            // Judged for coverage, the same twin reads the receiver, and the lower() node's value is
            // recorded lazily (`lazilyLowered`).
            if hints != nil, case .method(let inner, .lower, _, 0) = ops[Int(base)], let lowering = code.loweringRegexes[Int(regex)] {
                return try lazilyLowered(base, inner, lowering, regex)
            }
            let recv = try eval(base)
            guard case .string(let s) = recv else { throw EvalError.noFunction("matches", on: recv) }
            return .bool(code.regexes[Int(regex)].fullMatch(s))
        case .unknownMethod(let base, let name):
            let recv = try eval(base)
            throw EvalError.noFunction(code.names[Int(name)], on: recv)
        case .failingCall(let base, let message):
            _ = try eval(base)
            throw EvalError(code.names[Int(message)])
        case .builtin(let b, let start, let count):
            let values = try evalOperands(start, count)
            switch b {
            case .get, .exists, .getAfter, .existsAfter, .firestoreGet, .firestoreExists: return try access(b, values[0])
            case .debug:
                debugMessages.append(values.map(\.rendered).joined(separator: " "))
                return values[0]
            default: return try Methods.builtin(b, values)
            }
        case .call(let function, let start, let count):
            let f = functionCode[Int(function)]
            // Arguments go on the stack above the caller's frame; they become the callee's first slots.
            let base = locals.count
            // Reserved at the first call, not up front: many decisions call no function with
            // parameters or lets (a get's `isOwner()`), and the buffer was allocated for nothing.
            if locals.capacity == 0, count + f.letCount > 0 { locals.reserveCapacity(16) }
            // One at a time: a call leaves one or two slots, and `removeLast(_:)` went through
            // the general `replaceSubrange`.
            defer {
                while locals.count > base { locals.removeLast() }
                if !letErrors.isEmpty { dropLetErrors(from: base) }
            }
            for k in Int(start)..<Int(start + count) { locals.append(try eval(operands[k])) }
            if callDepth >= Evaluation.maxCallDepth {
                throw EvalError("Maximum function call depth (\(Evaluation.maxCallDepth)) exceeded.")
            }
            callDepth += 1
            let savedBase = frameBase
            frameBase = base
            defer {
                frameBase = savedBase
                callDepth -= 1
            }
            if f.letCount > 0 { try evalLets(f) }
            return try eval(f.body)
        case .not(let x):
            let v = try eval(x)
            guard case .bool(let b) = v else { throw EvalError.unsupported("!", v) }
            return .bool(!b)
        case .negate(let x):
            let v = try eval(x)
            switch v {
            case .int(let i):
                guard i != Int64.min else { throw EvalError.overflow }
                return .int(-i)
            case .float(let d): return .float(-d)
            case .duration(let s, let n): return .duration(seconds: -s, nanos: -n)
            default: throw EvalError.unsupported("-", v)
            }
        case .binary(.add, let l, let r) where !recording && Evaluation.isAdd(ops[Int(l)]):
            return try concatenation(l, r)
        case .binary(.add, let l, let r) where Evaluation.isAdd(ops[Int(l)]):
            return try recordedChain(l, r)
        case .binary(let op, let l, let r):
            let a = try eval(l)
            let b = try eval(r)
            return try Operators.apply(op, a, b)
        case .and(let l, let r):
            return try logical(l, r, absorbing: false)
        case .or(let l, let r):
            return try logical(l, r, absorbing: true)
        case .ternary(let c, let yes, let no):
            let v = try eval(c)
            guard case .bool(let b) = v else { throw EvalError("Ternary condition must be a bool, got \(v.typeName).") }
            return try eval(b ? yes : no)
        case .isType(let x, let t):
            let v = try eval(x)
            if Evaluation.isType(v, t) { return .bool(true) }
            if case .constraint(let c) = v { return .bool(try c.isType(t)) }
            return .bool(false)
        }
    }

    /// `inner.lower().matches(…)` judged for coverage (`hints`), `lowering` the matcher's twin that
    /// reads its input lowered: the lower() node `lowerNode` is counted, and its error attributed
    /// and recorded, as `eval` would, but a string receiver is never lowered here — its value is
    /// counted at its offer by the lowered bytes (`Offers.entry(_:lowering:)`) or recorded as the
    /// receiver to lower (`Visit(_:lowering:)`, made into the string where the visit is read: the
    /// fold, a trace). A create's joined fields are unique to each request, so their lowered copy
    /// (~135 bytes allocated, mapped and freed by the worker) is now built by the fold instead.
    private mutating func lazilyLowered(_ lowerNode: Int32, _ inner: Int32, _ lowering: NativeRegex,
                                        _ regex: Int32) throws(EvalError) -> RulesValue {
        try count(lowerNode)
        let recv: RulesValue
        do throws(EvalError) {
            recv = try eval(inner)
        } catch {
            throw failed(error, at: lowerNode)
        }
        guard case .string(let s) = recv else {
            // lower() of something else: its error or value as the general path gives them.
            let lowered: RulesValue
            do throws(EvalError) {
                lowered = try Methods.call(.lower, recv, [])
            } catch {
                throw failed(error, at: lowerNode)
            }
            keep(lowerNode, lowered)
            guard case .string(let l) = lowered else { throw EvalError.noFunction("matches", on: lowered) }
            return .bool(code.regexes[Int(regex)].fullMatch(l))
        }
        let entry = offers.entry(lowerNode, lowering: s)
        if entry >= 0 {
            hit(lowerNode, entry)
        } else {
            appendVisit(Visit(lowerNode, lowering: s))
        }
        return .bool(lowering.fullMatch(s))
    }

    /// `inner.keys().hasAll/hasOnly/hasAny(argument)` with the same operand order and errors as
    /// the general path, which it takes whenever the operands are not a map and a list of strings.
    private mutating func keysHave(_ inner: Int32, _ m: Method, _ argument: Int32) throws(EvalError) -> RulesValue {
        let map = try eval(inner)
        guard case .map(let d) = map else {
            return try Methods.call(m, try Methods.call(.keys, map, []), [try eval(argument)])
        }
        let arg = try eval(argument)
        if case .list(let wanted) = arg, let answer = CollectionFunctions.keysHave(m, d, wanted) {
            return .bool(answer)
        }
        return try Methods.call(m, try Methods.call(.keys, map, []), [arg])
    }

    /// `keysNode.hasAll/hasOnly/hasAny(argument)` where keysNode is `inner.keys()`, while recording:
    /// the same visits, values, count and errors as evaluating keysNode and the argument, but the
    /// key list (which the trace and coverage need) is built once per map per request, and the
    /// answer comes from the map, not from comparing the lists value by value.
    private mutating func keysHaveRecorded(_ keysNode: Int32, _ inner: Int32, _ m: Method, _ argument: Int32) throws(EvalError) -> RulesValue {
        try count(keysNode)
        let keys: RulesValue
        var map: RulesMap?
        do throws(EvalError) {
            let recv = try eval(inner)
            if case .map(let d) = recv {
                map = d
                keys = keyList(d, keysNode)
            } else {
                keys = try Methods.call(.keys, recv, [])
            }
        } catch {
            throw failed(error, at: keysNode)
        }
        appendVisit(Visit(keysNode, .value(keys)))
        let arg = try eval(argument)
        if let map, case .list(let wanted) = arg, let answer = CollectionFunctions.keysHave(m, map, wanted) {
            return .bool(answer)
        }
        return try Methods.call(m, keys, [arg])
    }

    /// `d.keys()`, the same list for every call on one map storage during this request (the
    /// schema checks call it twice on the request's data). Judged for coverage, the list
    /// `keysNode`'s last entry holds when it has these keys' bytes (`CoverageHints.keyList`): the
    /// fold then counts the visit by the storage, where a list built here was compared with the
    /// entry and replaced it.
    private mutating func keyList(_ d: RulesMap, _ keysNode: Int32) -> RulesValue {
        let storage = d.storageIdentity
        if let lastKeys, lastKeys.storage == storage { return lastKeys.list }
        let list = hints?.keyList(keysNode, of: d) ?? RulesValue.list(d.map { .string($0.key) })
        // The map is kept with its list so its storage (the key) cannot be freed and reused.
        lastKeys = (storage, d, list)
        return list
    }

    /// `l + r` where l is itself a `+` (`a + '\n' + b + …`), without recording: strings are
    /// appended to one buffer instead of allocating every intermediate result. Operands are
    /// evaluated and combined in the same left-to-right order as the tree, so errors are the same;
    /// the inner `+` nodes are neither counted nor recorded (this runs only without recording).
    /// The chain is walked by recursion, not gathered into an array first (an allocation and
    /// three regrowths per chain).
    private mutating func concatenation(_ l: Int32, _ r: Int32) throws(EvalError) -> RulesValue {
        var chain = newChain(l)
        try plainChainStep(l, &chain)
        try chainAppend(try eval(r), &chain)
        materialize(&chain)
        return chain.acc
    }

    /// Inner `+` node `id` of a chain judged without recording.
    private mutating func plainChainStep(_ id: Int32, _ chain: inout Chain) throws(EvalError) {
        guard case .binary(.add, let l, let r) = ops[Int(id)] else { return }
        if Evaluation.isAdd(ops[Int(l)]) {
            try plainChainStep(l, &chain)
        } else {
            chain.acc = try eval(l)
        }
        try chainAppend(try eval(r), &chain)
    }

    /// A chain whose left operand is `l`, with room for its steps' bytes.
    private func newChain(_ l: Int32) -> Chain {
        var chain = Chain()
        var leftmost = l
        while case .binary(.add, let ll, _) = ops[Int(leftmost)] {
            chain.room += 24
            leftmost = ll
        }
        return chain
    }

    private static func isAdd(_ op: Op) -> Bool {
        if case .binary(.add, _, _) = op { return true }
        return false
    }

    /// A `+` chain's progress: the value so far, or while its steps are strings, their bytes (while
    /// recording, with the steps recorded as placeholders for prefixes of the string to come).
    private struct Chain {
        var acc: RulesValue = .null
        var bytes: [UInt8] = []
        /// Room reserved for the bytes after the first string: 24 per step (`stringFields`'
        /// 135 bytes regrew the buffer from 64).
        var room = 48
        var gathering = false
        /// Where in `visited` this run of gathered steps began.
        var waitingFrom = 0
    }

    /// `l + r` while recording, where l is itself a `+` (`a + '\n' + b + …`): the same visits,
    /// values, expression count and errors as evaluating the tree node by node (`chainStep` does
    /// eval's bookkeeping for each inner `+`), but strings are appended to one buffer and each
    /// step is recorded as a prefix of the string built at the end: no intermediate string is
    /// allocated, and coverage compares the prefixes without building them either.
    private mutating func recordedChain(_ l: Int32, _ r: Int32) throws(EvalError) -> RulesValue {
        var chain = newChain(l)
        do throws(EvalError) {
            try chainStep(l, &chain)
            try chainAppend(try eval(r), &chain)
        } catch {
            materialize(&chain)
            throw error
        }
        materialize(&chain)
        return chain.acc
    }

    /// Inner `+` node `id` of a chain, as `eval` would judge and record it.
    private mutating func chainStep(_ id: Int32, _ chain: inout Chain) throws(EvalError) {
        try count(id)
        guard case .binary(.add, let l, let r) = ops[Int(id)] else { return }
        do throws(EvalError) {
            if Evaluation.isAdd(ops[Int(l)]) {
                try chainStep(l, &chain)
            } else {
                chain.acc = try eval(l)
            }
            try chainAppend(try eval(r), &chain)
            if chain.gathering {
                let entry = offers.entry(id, prefix: chain.bytes)
                if entry >= 0 {
                    hit(id, entry)
                    return
                }
                // Filled in by `materialize` once the whole string exists.
                appendVisit(Visit(id, prefix: Int32(chain.bytes.count), of: .value(.null)))
            } else {
                keep(id, chain.acc)
            }
        } catch {
            throw failed(error, at: id)
        }
    }

    /// The chain's value so far plus `v`.
    private mutating func chainAppend(_ v: RulesValue, _ chain: inout Chain) throws(EvalError) {
        if !chain.gathering, case .string(let s) = chain.acc, case .string = v {
            chain.bytes.reserveCapacity(s.utf8.count + chain.room)
            Evaluation.appendUTF8(s, to: &chain.bytes)
            chain.gathering = true
            chain.waitingFrom = visited.count
        }
        if chain.gathering {
            if case .string(let s) = v {
                Evaluation.appendUTF8(s, to: &chain.bytes)
                return
            }
            materialize(&chain)
        }
        chain.acc = try Operators.apply(.add, chain.acc, v)
    }

    /// Ends a run of gathered steps: builds their string and gives it to the steps recorded as its
    /// prefixes (an inner chain's own placeholders are filled before it returns).
    private mutating func materialize(_ chain: inout Chain) {
        guard chain.gathering else { return }
        let s = String(decoding: chain.bytes, as: UTF8.self)
        chain.acc = .string(s)
        chain.bytes.removeAll(keepingCapacity: true)
        chain.gathering = false
        var i = chain.waitingFrom
        while i < visited.count {
            if visited[i].prefix >= 0, case .value(.null) = visited[i].raw { visited[i].raw = .value(.string(s)) }
            i += 1
        }
    }

    private static func appendUTF8(_ s: String, to bytes: inout [UInt8]) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Forgets the let errors of a call's frame (slots from `base` up) as the call returns. Out of
    /// line, as `evalLets`.
    @inline(never)
    private mutating func dropLetErrors(from base: Int) {
        letErrors = letErrors.filter { $0.key < base }
    }

    /// A function's lets onto the locals stack, eagerly and in order; an error in one is the call's
    /// error only if the body (or a later let) reads it (`letErrors`). Fatal errors (the access and
    /// expression limits) stop the request at once. Out of line: `eval`'s switch stays as small as
    /// it was before lets could fail lazily (an inlined loop cost the shipped create 250
    /// instructions a decision).
    @inline(never)
    private mutating func evalLets(_ f: FunctionCode) throws(EvalError) {
        for k in Int(f.letStart)..<Int(f.letStart + f.letCount) {
            do throws(EvalError) {
                locals.append(try eval(operands[k]))
            } catch {
                if error.fatal { throw error }
                letErrors[locals.count] = error
                locals.append(.null)
            }
        }
    }

    /// `&&` (absorbing false) and `||` (absorbing true) with CEL's commutative error absorption.
    private mutating func logical(_ l: Int32, _ r: Int32, absorbing: Bool) throws(EvalError) -> RulesValue {
        var leftError: EvalError?
        do throws(EvalError) {
            let v = try eval(l)
            if case .bool(let b) = v {
                if b == absorbing { return .bool(absorbing) }   // short circuit
            } else {
                leftError = EvalError.notBool(v)
            }
        } catch {
            if error.fatal { throw error }
            leftError = error
        }
        let v: RulesValue
        do throws(EvalError) {
            v = try eval(r)
        } catch {
            if error.fatal { throw error }
            throw leftError ?? error
        }
        guard case .bool(let b) = v else {
            throw leftError ?? EvalError.notBool(v)
        }
        if b == absorbing { return .bool(absorbing) }
        if let leftError { throw leftError }
        return .bool(b)
    }

    private mutating func access(_ function: Builtin, _ arg: RulesValue) throws(EvalError) -> RulesValue {
        guard case .path(let path, _) = arg else {
            if case .null = arg { throw EvalError.nullValue }
            throw EvalError.signature(function.rawValue, [arg], expected: ["path"])
        }
        try RulesValue.requireBound(path)
        // A path that is not a document's (a collection, the database, anything outside
        // `/databases/{db}/documents`) is an error, as on the official emulator: no store can
        // answer it, and answering "absent" let `!exists(/databases/$(database)/users/x)` allow.
        // So is a document of another database than the request's (`get`/`exists` and their
        // `After` forms; `firestore.get` from storage rules names the database it reads).
        let isDocument = path.count >= 5 && path.count % 2 == 1 && path[0] == "databases" && path[2] == "documents"
        let crossDatabase = function != .firestoreGet && function != .firestoreExists && request.path.count > 1
            && request.path[0] == "databases" && path.count > 1 && !ExactString.equal(path[1], request.path[1])
        if !isDocument || crossDatabase {
            throw EvalError("Service call error. Function: [\(function.rawValue)], Argument: [\(arg.rendered)].")
        }
        functionCalls.append((function.rawValue, [arg]))
        let key = CallKey(function: function.rawValue, path: path)
        if let cached = callCache[key] { return cached }
        // Cached calls and repeated reads of one document count once toward the limit.
        let doc = DocumentKey(after: function == .getAfter || function == .existsAfter, path: path)
        if !documentsRead.contains(doc) {
            if documentsRead.count >= request.accessLimit {
                throw EvalError("Exceeded the limit of \(request.accessLimit) document access calls (get, exists, getAfter, existsAfter) for this request.", fatal: true)
            }
            documentsRead.insert(doc)
        }
        let result = try accessor.access(function, path).get()
        callCache[key] = result
        return result
    }

    private mutating func requestMap() -> RulesValue {
        if let wholeRequest { return wholeRequest }
        var fields: RulesMap = [
            "auth": request.auth ?? .null,
            "method": .string(request.method.rawValue),
            "path": .path(request.path),
            "time": request.time,
            "resource": request.requestResource ?? .null,
            "query": request.query ?? .null,
        ]
        if request.methodShaped {
            if request.method == .get || request.method == .list { fields["resource"] = nil }
            if request.method != .list { fields["query"] = nil }
        }
        let m: RulesValue = .map(fields)
        wholeRequest = m
        return m
    }

    // MARK: Value helpers

    /// What a `{wildcard}` holds for a list's placeholder document id: some string (every string
    /// is at least ''), nothing more.
    static let anyDocumentID = RulesValue.constraint(RulesConstraint(filters: [RulesConstraint.Filter(.greaterEqual, .string(""))]))

    static func segmentText(_ v: RulesValue) throws(EvalError) -> String {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .null: throw EvalError.nullValue
        default: throw EvalError("Path interpolation needs a string, got \(v.typeName).")
        }
    }

    /// A slice's bounds: an int, or null for an absent one — `[1, 2][null:]` is `[1, 2]` on the
    /// official emulator, which names the four shapes it takes when a bound is anything else.
    static func sliceBounds(_ b: RulesValue, _ lo: RulesValue, _ hi: RulesValue) throws(EvalError) -> (Int64?, Int64?) {
        func bound(_ v: RulesValue) -> Int64?? {
            switch v {
            case .int(let i): return .some(i)
            case .null: return .some(nil)
            default: return nil
            }
        }
        guard let l = bound(lo), let h = bound(hi) else {
            switch b {
            case .list, .string, .path:
                let t = b.typeName
                throw EvalError("Unsupported operation error. Received: \(t)[\(lo.typeName):\(hi.typeName)]. Expected: "
                                + "\(t)[null:null], \(t)[null:int], \(t)[int:null], \(t)[int:int].")
            case .null: throw EvalError.nullValue
            default: throw EvalError.unsupported("[:] on ", b)
            }
        }
        return (l, h)
    }

    static func member(_ b: RulesValue, _ name: String) throws(EvalError) -> RulesValue {
        switch b {
        case .map(let m):
            guard let v = m[name] else { throw EvalError.missingProperty(name) }
            return v
        case .constraint(let c): return try c.member(name)
        case .null: throw EvalError.nullValue
        case .path(let p, let names): return try pathMember(p, names, name)
        default: throw EvalError("Property \(name) is undefined on object of type \(b.typeName).")
        }
    }

    /// `p.name` and `p['name']`: the rules reference's access to a path's bound variables, the
    /// segment a `bind()` made of `{name}` (`RulesPathNames`). A template's unbound `{name}` is the
    /// emulator's `Variable x is not bound in path template.`; any other name (a request's path
    /// binds none) `Property x is undefined on object.`, as there.
    static func pathMember(_ p: [String], _ names: RulesPathNames?, _ name: String) throws(EvalError) -> RulesValue {
        if let e = names?.entry(named: name), e.segment < p.count {
            guard let span = e.span else { return .string(p[e.segment]) }
            return .path(Array(p[e.segment..<min(p.count, e.segment + span)]))
        }
        for seg in p where seg.utf8.first == 0 {
            if let v = RulesValue.templateName(seg), ExactString.equal(String(v), name) {
                throw EvalError("Variable \(name) is not bound in path template.")
            }
        }
        throw EvalError.missingProperty(name)
    }

    static func index(_ b: RulesValue, _ i: RulesValue) throws(EvalError) -> RulesValue {
        switch (b, i) {
        case (.map(let m), .string(let k)):
            guard let v = m[k] else { throw EvalError.missingProperty(k) }
            return v
        case (.list(let items), .int(let n)):
            guard n >= 0, n < items.count else { throw EvalError.indexOutOfRange(n, items.count) }
            return items[Int(n)]
        case (.string(let s), .int(let n)): return try StringFunctions.index(s, n)
        case (.path(let p, _), .int(let n)):
            try RulesValue.requireBound(p)
            guard n >= 0, n < p.count else { throw EvalError.indexOutOfRange(n, p.count) }
            return .string(p[Int(n)])
        case (.path(let p, let names), .string(let name)): return try pathMember(p, names, name)
        case (.constraint(let c), _): return try c.index(i)
        case (.null, _): throw EvalError.nullValue
        // Only lists, strings, paths and maps have `[]` on the emulator (`b'a'[0]`, `[1].toSet()[0]`,
        // `1[0]`: `Function not found error: Name: [[]].`); a null index is a wrong type there
        // (`[1][null]`: `Received: list[null]. Expected: list[int].`).
        case (.list, _), (.string, _), (.path, _), (.map, _): throw EvalError.badIndex(b, i)
        default: throw EvalError.noFunction("[]")
        }
    }

    static func isType(_ v: RulesValue, _ t: TypeName) -> Bool {
        switch (t, v) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.number, .int), (.number, .float), (.string, .string),
             (.list, .list), (.map, .map), (.timestamp, .timestamp), (.duration, .duration), (.path, .path),
             (.latlng, .latlng), (.bytes, .bytes), (.mapDiff, .mapDiff), (.vector, .vector):
            return true
        // `is set` holds of nothing on the official emulator, a set included (`[1].toSet() is set`
        // is false there).
        default:
            return false
        }
    }
}
