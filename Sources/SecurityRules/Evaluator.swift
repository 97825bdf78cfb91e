// The evaluator: judges one request against a checked program.
//
// Errors are values (Swift typed throws carry them): `false && e` is false and `true || e` is
// true whatever e is, as in CEL; anything else that meets an error is an error, and an error that
// reaches an allow condition makes that statement false. Limit errors (document accesses,
// expressions per request) are fatal: they deny the whole request.

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
        case .get: return .success(lookup.get(path) ?? .null)
        case .getAfter: return .success(lookup.getAfter(path) ?? .null)
        case .exists: return .success(.bool(lookup.get(path) != nil))
        default: return .success(.bool(lookup.getAfter(path) != nil))
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
    var bindings: [RulesValue]
    var names: [String]
    var pattern: String
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
    let accessor: any DocumentAccessor

    private var bindings: [RulesValue] = []
    private var locals: [RulesValue] = []
    private var callDepth = 0
    private var expressionCount = 0
    private var documentsRead = Set<DocumentKey>()
    private var callCache: [CallKey: RulesValue] = [:]
    private var wholeRequest: RulesValue?

    private(set) var visited: [(Int32, TracedRaw)] = []
    private(set) var debugMessages: [String] = []
    private(set) var functionCalls: [(String, [RulesValue])] = []
    private(set) var instances: [MatchInstance] = []
    private(set) var attempts: [AllowAttempt] = []
    private(set) var fatal: EvalError?

    private struct DocumentKey: Hashable { var after: Bool; var path: [String] }
    private struct CallKey: Hashable { var function: String; var path: [String] }

    init(program: Program, request: RulesRequest, accessor: any DocumentAccessor) {
        self.program = program
        self.request = request
        self.accessor = accessor
        visited.reserveCapacity(64)
    }

    /// Runs the request; true when some allow statement grants it.
    mutating func run() -> Bool {
        collect(program.matches, pos: 0, bindings: [], names: [], prefix: "")
        let wanted = MethodSet(request.method)
        for (i, instance) in instances.enumerated() {
            for allow in instance.block.allows where allow.methods.contains(wanted) {
                bindings = instance.bindings
                let start = visited.count
                guard let condition = allow.condition else {
                    attempts.append(AllowAttempt(allow: allow, instance: i, result: .value(.bool(true)), visited: start..<start))
                    return true
                }
                do throws(EvalError) {
                    let v = try eval(condition)
                    attempts.append(AllowAttempt(allow: allow, instance: i, result: .value(v), visited: start..<visited.count))
                    if case .bool(true) = v { return true }
                } catch {
                    attempts.append(AllowAttempt(allow: allow, instance: i, result: .error(error), visited: start..<visited.count))
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
        return try eval(node)
    }

    // MARK: Matching

    private mutating func collect(_ blocks: [CheckedMatch], pos: Int, bindings: [RulesValue], names: [String], prefix: String) {
        for b in blocks {
            var bs = bindings
            matchSegments(b, 0, pos, &bs, names, prefix)
        }
    }

    private mutating func matchSegments(_ b: CheckedMatch, _ si: Int, _ pos: Int, _ bs: inout [RulesValue], _ names: [String], _ prefix: String) {
        let path = request.path
        if si == b.segments.count {
            if pos == path.count {
                instances.append(MatchInstance(block: b, bindings: bs, names: names + b.variableNames, pattern: prefix + b.pathText))
            }
            if !b.children.isEmpty {
                collect(b.children, pos: pos, bindings: bs, names: names + b.variableNames, prefix: prefix + b.pathText)
            }
            return
        }
        switch b.segments[si] {
        case .literal(let s):
            guard pos < path.count, path[pos] == s else { return }
            matchSegments(b, si + 1, pos + 1, &bs, names, prefix)
        case .single:
            guard pos < path.count else { return }
            bs.append(.string(path[pos]))
            matchSegments(b, si + 1, pos + 1, &bs, names, prefix)
            bs.removeLast()
        case .recursive:
            // v2: zero or more segments; v1: one or more. Longest first, backtracking for what follows.
            let minimum = program.version == 1 ? 1 : 0
            var len = path.count - pos
            while len >= minimum {
                bs.append(.path(Array(path[pos..<(pos + len)])))
                matchSegments(b, si + 1, pos + len, &bs, names, prefix)
                bs.removeLast()
                len -= 1
            }
        }
    }

    // MARK: Expressions

    mutating func eval(_ node: Node) throws(EvalError) -> RulesValue {
        if case .constant(_, let v) = node { return v }
        expressionCount += 1
        if expressionCount > Evaluation.maxExpressions {
            var e = EvalError("Exceeded the maximum of \(Evaluation.maxExpressions) expressions evaluated for a request.", fatal: true)
            e.nodeID = node.id
            throw e
        }
        do throws(EvalError) {
            let v = try evaluate(node)
            visited.append((node.id, .value(v)))
            return v
        } catch {
            var e = error
            if e.nodeID < 0 { e.nodeID = node.id }
            visited.append((node.id, .error(e)))
            throw e
        }
    }

    private mutating func evaluate(_ node: Node) throws(EvalError) -> RulesValue {
        switch node {
        case .constant(_, let v):
            return v
        case .list(_, let items):
            var out: [RulesValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try eval(item)) }
            return .list(out)
        case .map(_, let entries):
            var out: [String: RulesValue] = [:]
            for (k, v) in entries {
                guard case .string(let key) = try eval(k) else { throw EvalError("Map keys must be strings.") }
                out[key] = try eval(v)
            }
            return .map(out)
        case .path(_, let segments):
            var out: [String] = []
            for parts in segments {
                if parts.count == 1, case .expr(let e) = parts[0] {
                    let v = try eval(e)
                    if case .path(let p) = v { out.append(contentsOf: p); continue }
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
            return .path(out)
        case .local(_, let slot):
            return locals[slot]
        case .pathVariable(_, let index):
            return bindings[index]
        case .request(_, let field):
            switch field {
            case .auth: return request.auth ?? .null
            case .method: return .string(request.method.rawValue)
            case .path: return .path(request.path)
            case .time: return request.time
            case .resource: return request.requestResource ?? .null
            case .query: return request.query ?? .null
            case nil: return requestMap()
            }
        case .resource:
            return request.resource ?? .null
        case .unknownVariable(_, let name):
            throw EvalError("Variable not found: \(name).")
        case .member(_, let base, let name):
            let b = try eval(base)
            return try Evaluation.member(b, name)
        case .index(_, let base, let index):
            let b = try eval(base)
            let i = try eval(index)
            return try Evaluation.index(b, i)
        case .slice(_, let base, let lo, let hi):
            let b = try eval(base)
            let l = try lo.map { (x: Node) throws(EvalError) -> Int64 in try Evaluation.int(try eval(x)) }
            let h = try hi.map { (x: Node) throws(EvalError) -> Int64 in try Evaluation.int(try eval(x)) }
            switch b {
            case .list(let items):
                let (a, z) = try CollectionFunctions.bounds(l, h, items.count)
                return .list(Array(items[a..<z]))
            case .string(let s): return try StringFunctions.slice(s, l, h)
            case .path(let p):
                let (a, z) = try CollectionFunctions.bounds(l, h, p.count)
                return .path(Array(p[a..<z]))
            case .null: throw EvalError.nullValue
            default: throw EvalError.unsupported("[:] on ", b)
            }
        case .method(_, let base, let m, let args):
            let recv = try eval(base)
            var values: [RulesValue] = []
            values.reserveCapacity(args.count)
            for a in args { values.append(try eval(a)) }
            return try Methods.call(m, recv, values)
        case .matchesConstant(_, let base, let regex):
            let recv = try eval(base)
            guard case .string(let s) = recv else { throw EvalError.noFunction("matches", on: recv) }
            return .bool(regex.fullMatch(s))
        case .unknownMethod(_, let base, let name):
            let recv = try eval(base)
            throw EvalError.noFunction(name, on: recv)
        case .builtin(_, let b, let args):
            var values: [RulesValue] = []
            values.reserveCapacity(args.count)
            for a in args { values.append(try eval(a)) }
            switch b {
            case .get, .exists, .getAfter, .existsAfter: return try access(b, values[0])
            case .debug:
                debugMessages.append(values[0].rendered)
                return values[0]
            default: return try Methods.builtin(b, values)
            }
        case .call(_, let index, let args):
            let f = program.functions[index]
            var frame: [RulesValue] = []
            frame.reserveCapacity(f.localCount)
            for a in args { frame.append(try eval(a)) }
            if callDepth >= Evaluation.maxCallDepth {
                throw EvalError("Maximum function call depth (\(Evaluation.maxCallDepth)) exceeded.")
            }
            callDepth += 1
            let saved = locals
            locals = frame
            defer {
                locals = saved
                callDepth -= 1
            }
            // `let` is evaluated eagerly, in order; an error in one makes the call an error.
            for l in f.lets { locals.append(try eval(l)) }
            return try eval(f.body)
        case .not(_, let x):
            let v = try eval(x)
            guard case .bool(let b) = v else { throw EvalError.unsupported("!", v) }
            return .bool(!b)
        case .negate(_, let x):
            let v = try eval(x)
            switch v {
            case .int(let i):
                guard i != Int64.min else { throw EvalError.overflow }
                return .int(-i)
            case .float(let d): return .float(-d)
            case .duration(let s, let n): return .duration(seconds: -s, nanos: -n)
            default: throw EvalError.unsupported("-", v)
            }
        case .binary(_, let op, let l, let r):
            let a = try eval(l)
            let b = try eval(r)
            return try Operators.apply(op, a, b)
        case .and(_, let l, let r):
            return try logical(l, r, absorbing: false)
        case .or(_, let l, let r):
            return try logical(l, r, absorbing: true)
        case .ternary(_, let c, let yes, let no):
            let v = try eval(c)
            guard case .bool(let b) = v else { throw EvalError("Ternary condition must be a bool, got \(v.typeName).") }
            return try eval(b ? yes : no)
        case .isType(_, let x, let t):
            return .bool(Evaluation.isType(try eval(x), t))
        }
    }

    /// `&&` (absorbing false) and `||` (absorbing true) with CEL's commutative error absorption.
    private mutating func logical(_ l: Node, _ r: Node, absorbing: Bool) throws(EvalError) -> RulesValue {
        var leftError: EvalError?
        do throws(EvalError) {
            let v = try eval(l)
            if case .bool(let b) = v {
                if b == absorbing { return .bool(absorbing) }   // short circuit
            } else {
                leftError = EvalError.unsupported(v, absorbing ? "||" : "&&", .bool(absorbing))
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
            throw leftError ?? EvalError.unsupported(.bool(!absorbing), absorbing ? "||" : "&&", v)
        }
        if b == absorbing { return .bool(absorbing) }
        if let leftError { throw leftError }
        return .bool(b)
    }

    private mutating func access(_ function: Builtin, _ arg: RulesValue) throws(EvalError) -> RulesValue {
        guard case .path(let path) = arg else {
            if case .null = arg { throw EvalError.nullValue }
            throw EvalError.invalidArgument(function.rawValue, "path expected, got \(arg.typeName)")
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
        let m: RulesValue = .map([
            "auth": request.auth ?? .null,
            "method": .string(request.method.rawValue),
            "path": .path(request.path),
            "time": request.time,
            "resource": request.requestResource ?? .null,
            "query": request.query ?? .null,
        ])
        wholeRequest = m
        return m
    }

    // MARK: Value helpers

    static func segmentText(_ v: RulesValue) throws(EvalError) -> String {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .null: throw EvalError.nullValue
        default: throw EvalError("Path interpolation needs a string, got \(v.typeName).")
        }
    }

    static func int(_ v: RulesValue) throws(EvalError) -> Int64 {
        guard case .int(let i) = v else {
            if case .null = v { throw EvalError.nullValue }
            throw EvalError("Index must be an int, got \(v.typeName).")
        }
        return i
    }

    static func member(_ b: RulesValue, _ name: String) throws(EvalError) -> RulesValue {
        switch b {
        case .map(let m):
            guard let v = m[name] else { throw EvalError.missingProperty(name) }
            return v
        case .null: throw EvalError.nullValue
        default: throw EvalError("Property \(name) is undefined on object of type \(b.typeName).")
        }
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
        case (.path(let p), .int(let n)):
            guard n >= 0, n < p.count else { throw EvalError.indexOutOfRange(n, p.count) }
            return .string(p[Int(n)])
        case (.null, _), (_, .null): throw EvalError.nullValue
        default: throw EvalError.unsupported(b, "[]", i)
        }
    }

    static func isType(_ v: RulesValue, _ t: TypeName) -> Bool {
        switch (t, v) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.number, .int), (.number, .float), (.string, .string),
             (.list, .list), (.map, .map), (.timestamp, .timestamp), (.duration, .duration), (.path, .path),
             (.latlng, .latlng), (.bytes, .bytes), (.set, .set), (.mapDiff, .mapDiff):
            return true
        default:
            return false
        }
    }
}
