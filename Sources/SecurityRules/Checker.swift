// The checker: resolves every name of a parsed file and reports semantic problems.
//
// Scoping follows the rules language: a function sees the path variables of the blocks that
// enclose its declaration (not of the caller), its parameters and `let`s, `request` and
// `resource`; functions are visible anywhere in the block that declares them and in nested
// blocks, before or after their declaration. Recursion is rejected here, so the evaluator's
// call-depth limit only has to stop long chains.

struct CheckDiagnostic: Sendable, Equatable {
    var message: String
    var range: SourceRange
    var severity: RulesIssue.Severity
}

struct Checker {
    private(set) var diagnostics: [CheckDiagnostic] = []
    private var nodes: [NodeInfo] = []
    private var roots: [Int32] = []
    private var functionDecls: [(decl: FunctionDecl, scope: Scope)] = []
    private var checkedFunctions: [CheckedFunction?] = []
    private var callees: [Set<Int>] = []
    private var useCounts: [Int] = []
    private var allowCount = 0
    /// False inside a service Hearth does not evaluate: there, as on the emulator, every allow
    /// method is an unknown one and the statement grants nothing.
    private var methodsKnown = true
    private let version: Int

    /// Static limits from the Firestore quotas page.
    static let maxArguments = 7, maxLets = 10, maxMatchDepth = 10

    /// A lexical block: the functions it declares and the path variables it binds.
    final class Scope {
        let parent: Scope?
        var functions: [String: Int] = [:]
        /// Path variables visible here (outer first), with their binding index.
        let variables: [(name: String, index: Int)]
        let depth: Int

        init(parent: Scope?, newVariables: [String]) {
            self.parent = parent
            let base = parent?.variables ?? []
            var vars = base
            for (i, n) in newVariables.enumerated() { vars.append((n, base.count + i)) }
            self.variables = vars
            self.depth = (parent?.depth ?? -1) + 1
        }

        func function(_ name: String) -> Int? { functions[name] ?? parent?.function(name) }
        func variable(_ name: String) -> Int? { variables.last(where: { $0.name == name })?.index }
    }

    /// Locals of the expression being checked (function parameters and lets).
    private struct Locals {
        var names: [String] = []
        var callerFunction: Int?
        func slot(_ name: String) -> Int? { names.lastIndex(of: name) }
    }

    init(version: Int) { self.version = version }

    /// Checks a parsed file; returns nil only when the file has no usable structure.
    /// judging: the known service whose blocks judge requests; the blocks of the other known
    /// service are checked (their issues reported) and judge nothing.
    static func check(_ file: RulesFile, text: SourceText, judging: RulesService) -> (Program, [CheckDiagnostic]) {
        var c = Checker(version: file.version)
        let program = c.run(file, text: text, judging: judging)
        return (program, c.diagnostics)
    }

    private mutating func error(_ message: String, _ range: SourceRange) {
        diagnostics.append(CheckDiagnostic(message: message, range: range, severity: .error))
    }

    private mutating func warning(_ message: String, _ range: SourceRange) {
        diagnostics.append(CheckDiagnostic(message: message, range: range, severity: .warning))
    }

    // MARK: Structure

    private mutating func run(_ file: RulesFile, text: SourceText, judging: RulesService) -> Program {
        var topMatches: [CheckedMatch] = []
        let root = Scope(parent: nil, newVariables: [])
        var declared: Set<String> = []
        for service in file.services {
            if !RulesService.names.contains(service.name) {
                // The emulator loads it with a warning and applies it to nothing.
                warning("Invalid service name: \(service.name).", service.nameRange)
            } else if !declared.insert(service.name).inserted {
                // The emulator's words and place (the second declaration's name).
                error("Duplicate service name declaration.", service.nameRange)
            }
            declareFunctions(service.body, in: root)
        }
        for service in file.services {
            methodsKnown = RulesService.names.contains(service.name)
            defer { methodsKnown = true }
            // `cloud.firestore` beside `firebase.storage` loads, as on the emulator; each service
            // is judged by its own blocks only. The other's are checked and never matched: a storage
            // `match /{all=**}` must not grant Firestore requests, nor the reverse (fail closed).
            let judges = !methodsKnown || service.name == judging.rawValue
            for stmt in service.body {
                switch stmt {
                case .match(let m):
                    if let cm = checkMatch(m, parent: root), judges { topMatches.append(cm) }
                case .allow(let a):
                    error("An allow statement must be inside a match block.", a.range)
                case .function:
                    break
                }
            }
        }
        // Function bodies are checked once every block has declared its functions, so a call may
        // precede its callee's declaration.
        var i = 0
        while i < functionDecls.count {
            checkFunction(i)
            i += 1
        }
        detectRecursion()
        for (index, entry) in functionDecls.enumerated() where useCounts[index] == 0 {
            warning("Unused function: \(entry.decl.name).", entry.decl.nameRange)
        }
        let functions = checkedFunctions.map { $0! }
        return Program(text: text, version: version, matches: topMatches, functions: functions, nodes: nodes,
                       allowCount: allowCount, roots: roots.sorted { nodes[Int($0)].range.start < nodes[Int($1)].range.start })
    }

    /// Registers the functions a block declares (its own, not nested blocks').
    private mutating func declareFunctions(_ body: [Statement], in scope: Scope) {
        for case .function(let f) in body {
            if scope.functions[f.name] != nil {
                error("Function \(f.name) is already defined.", f.nameRange)
                continue
            }
            if Builtin(rawValue: f.name) != nil {
                warning("Function '\(f.name)' hides the built-in function of the same name.", f.nameRange)
            }
            let index = functionDecls.count
            scope.functions[f.name] = index
            functionDecls.append((f, scope))
            checkedFunctions.append(nil)
            callees.append([])
            useCounts.append(0)
        }
    }

    /// chain: the path segments the enclosing blocks take and the path positions of their
    /// variables, nil below a recursive wildcard (where positions depend on the request's path).
    private mutating func checkMatch(_ m: MatchDecl, parent: Scope, prefix: String = "",
                                     chain: (segments: Int, positions: [Int32])? = (0, [])) -> CheckedMatch? {
        var names: [String] = []
        var recursiveCount = 0
        for (i, seg) in m.segments.enumerated() {
            switch seg.kind {
            case .literal: break
            case .single(let n), .recursive(let n):
                if names.contains(n) { error("Variable \(n) already exists in the PathTemplate.", seg.nameRange) }
                names.append(n)
                if case .recursive = seg.kind {
                    recursiveCount += 1
                    if version == 1, i != m.segments.count - 1 {
                        error("Invalid glob match expression. Glob matches are permitted as the last segment in a match declaration path.", seg.range)
                    }
                }
            }
        }
        if recursiveCount > 1 { error("Invalid glob match expression. Only one glob match is permitted in a match declaration path.", m.pathRange) }
        let scope = Scope(parent: parent, newVariables: names)
        if scope.depth > Checker.maxMatchDepth {
            error("Match statements are nested more than \(Checker.maxMatchDepth) levels deep.", m.pathRange)
        }
        if scope.variables.count > 20 {
            error("More than 20 path variables are in scope.", m.pathRange)
        }
        declareFunctions(m.body, in: scope)
        let text = m.segments.map { seg -> String in
            switch seg.kind {
            case .literal(let s): "/" + s
            case .single(let n): "/{\(n)}"
            case .recursive(let n): "/{\(n)=**}"
            }
        }.joined()
        var own = chain
        for seg in m.segments {
            switch seg.kind {
            case .literal: own?.segments += 1
            case .single:
                if let at = own?.segments { own?.positions.append(Int32(at)) }
                own?.segments += 1
            case .recursive: own = nil
            }
        }
        var allows: [CheckedAllow] = []
        var children: [CheckedMatch] = []
        for stmt in m.body {
            switch stmt {
            case .allow(let a): allows.append(checkAllow(a, scope: scope))
            case .match(let inner):
                if let c = checkMatch(inner, parent: scope, prefix: prefix + text, chain: own) { children.append(c) }
            case .function: break
            }
        }
        return CheckedMatch(segments: m.segments.map(\.kind), firstVariable: parent.variables.count, variableNames: names,
                            allows: allows, children: children, range: m.range, pathText: text,
                            pattern: prefix + text, allVariableNames: scope.variables.map(\.name),
                            positions: own.map(\.positions))
    }

    private mutating func checkAllow(_ a: AllowDecl, scope: Scope) -> CheckedAllow {
        var methods: MethodSet = []
        for (name, range) in a.methods {
            guard methodsKnown, let m = MethodSet.named(name) else {
                // The emulator loads the file and the statement allows nothing for that name.
                warning("Invalid method name: \(name).", range)
                continue
            }
            methods.formUnion(m)
        }
        var condition: Node?
        if let c = a.condition {
            var locals = Locals()
            let node = check(c, scope: scope, locals: &locals)
            roots.append(node.id)
            condition = node
        }
        let index = allowCount
        allowCount += 1
        return CheckedAllow(index: index, methods: methods, methodNames: a.methods.map(\.name), condition: condition, range: a.range)
    }

    private mutating func checkFunction(_ index: Int) {
        let (decl, scope) = functionDecls[index]
        var locals = Locals(callerFunction: index)
        var seen = Set<String>()
        for (p, r) in decl.params {
            if !seen.insert(p).inserted { error("Variable \(p) is already defined.", r) }
            locals.names.append(p)
        }
        if decl.params.count > Checker.maxArguments {
            error("A function may take at most \(Checker.maxArguments) arguments.", decl.nameRange)
        }
        if decl.lets.count > Checker.maxLets {
            error("A function may have at most \(Checker.maxLets) let bindings.", decl.nameRange)
        }
        var lets: [Node] = []
        for l in decl.lets {
            let node = check(l.value, scope: scope, locals: &locals)
            roots.append(node.id)
            lets.append(node)
            if locals.names.contains(l.name) { error("'\(l.name)' is already defined in this function.", l.range) }
            locals.names.append(l.name)
        }
        let body = check(decl.body, scope: scope, locals: &locals)
        roots.append(body.id)
        checkedFunctions[index] = CheckedFunction(name: decl.name, parameterCount: decl.params.count,
                                                  localCount: locals.names.count, lets: lets, body: body, range: decl.range)
    }

    private mutating func detectRecursion() {
        // Depth-first search with colours; a grey node reached again closes a cycle.
        var colour = [UInt8](repeating: 0, count: functionDecls.count)
        var reported = Set<Int>()
        func visit(_ f: Int, _ stack: inout [Int], _ checker: inout Checker) {
            colour[f] = 1
            stack.append(f)
            for g in checker.callees[f].sorted() {
                if colour[g] == 1 {
                    // The emulator's words, at the first function of the cycle.
                    if reported.insert(g).inserted {
                        checker.error("Recursive call is not allowed.", checker.functionDecls[g].decl.nameRange)
                    }
                } else if colour[g] == 0 {
                    visit(g, &stack, &checker)
                }
            }
            stack.removeLast()
            colour[f] = 2
        }
        for f in 0..<functionDecls.count where colour[f] == 0 {
            var stack: [Int] = []
            visit(f, &stack, &self)
        }
    }

    // MARK: Expressions

    private mutating func newNode(_ range: SourceRange, children: [Node], literal: Bool = false) -> Int32 {
        nodes.append(NodeInfo(range: range, children: children.map(\.id), isLiteral: literal))
        return Int32(nodes.count - 1)
    }

    private static func literalValue(_ e: Expr) -> RulesValue? {
        switch e {
        case .null: return .null
        case .bool(let b, _): return .bool(b)
        case .int(let i, _): return .int(i)
        case .float(let d, _): return .float(d)
        case .string(let s, _): return .string(s)
        case .bytes(let b, _): return .bytes(b)
        case .unary(.negate, .int(let i, _), _): return i == Int64.min ? nil : .int(-i)
        case .unary(.negate, .float(let d, _), _): return .float(-d)
        case .list(let items, _):
            var out: [RulesValue] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let v = literalValue(item) else { return nil }
                out.append(v)
            }
            return .list(out)
        default: return nil
        }
    }

    private mutating func check(_ e: Expr, scope: Scope, locals: inout Locals) -> Node {
        if let v = Checker.literalValue(e) {
            return .constant(newNode(e.range, children: [], literal: true), v)
        }
        switch e {
        case .null, .bool, .int, .float, .string, .bytes:
            return .constant(newNode(e.range, children: [], literal: true), .null) // unreachable: folded above
        case .invalid(let r):
            return .unknownVariable(newNode(r, children: []), "<invalid>")
        case .list(let items, let r):
            let checked = items.map { check($0, scope: scope, locals: &locals) }
            return .list(newNode(r, children: checked), checked)
        case .map(let entries, let r):
            var pairs: [(Node, Node)] = []
            var kids: [Node] = []
            for (k, v) in entries {
                let ck = check(k, scope: scope, locals: &locals)
                let cv = check(v, scope: scope, locals: &locals)
                if case .constant(_, let kv) = ck, !(kv.isString) {
                    error("Map keys must be strings.", k.range)
                }
                pairs.append((ck, cv))
                kids.append(ck); kids.append(cv)
            }
            return .map(newNode(r, children: kids), pairs)
        case .path(let segments, let r):
            var out: [[CheckedPathPart]] = []
            var kids: [Node] = []
            var allText = true
            var variables: [String] = []
            for seg in segments {
                var parts: [CheckedPathPart] = []
                for part in seg.parts {
                    switch part {
                    case .text(let t): parts.append(.text(t))
                    case .variable(let written):
                        // A template's variable, marked as `path('/a/{x}')` marks it; a name twice
                        // is the emulator's compile error (`{x=**}` is named `x` too).
                        let name = written.hasSuffix("=**") ? String(written.dropLast(3)) : written
                        if variables.contains(name) {
                            // Placed at the name, past the `{`, as the emulator places it.
                            var at = seg.range.start
                            at.column += 1
                            at.offset += 1
                            error("Variable \(name) already exists in the PathTemplate.", SourceRange(at, seg.range.end))
                        }
                        variables.append(name)
                        parts.append(.text(RulesValue.templateSegment(Substring("{" + written + "}"))))
                    case .interpolation(let x):
                        let cx = check(x, scope: scope, locals: &locals)
                        kids.append(cx)
                        parts.append(.expr(cx))
                        allText = false
                    }
                }
                out.append(parts)
            }
            if allText {
                let segs = out.map { $0.map { if case .text(let t) = $0 { t } else { "" } }.joined() }
                return .constant(newNode(r, children: [], literal: true), .path(segs))
            }
            return .path(newNode(r, children: kids), out)
        case .identifier(let name, let r):
            return resolveIdentifier(name, r, scope: scope, locals: locals)
        case .member(let base, let name, let r):
            if case .identifier("request", let br) = base, locals.slot("request") == nil, scope.variable("request") == nil {
                if let field = RequestField(rawValue: name) { return .request(newNode(r, children: []), field) }
                let whole = Node.request(newNode(br, children: []), nil)
                return .member(newNode(r, children: [whole]), whole, name)
            }
            if case .identifier(let ns, let nr) = base, Builtin.namespaces.contains(ns), locals.slot(ns) == nil, scope.variable(ns) == nil {
                error("'\(ns).\(name)' is a function; call it as \(ns).\(name)(…).", nr.to(r))
            }
            let cb = check(base, scope: scope, locals: &locals)
            return .member(newNode(r, children: [cb]), cb, name)
        case .index(let base, let idx, let r):
            let cb = check(base, scope: scope, locals: &locals)
            let ci = check(idx, scope: scope, locals: &locals)
            return .index(newNode(r, children: [cb, ci]), cb, ci)
        case .slice(let base, let lo, let hi, let r):
            let cb = check(base, scope: scope, locals: &locals)
            let cl = lo.map { check($0, scope: scope, locals: &locals) }
            let ch = hi.map { check($0, scope: scope, locals: &locals) }
            return .slice(newNode(r, children: [cb] + [cl, ch].compactMap { $0 }), cb, cl, ch)
        case .call(let name, let args, let r, let nameRange):
            let cargs = args.map { check($0, scope: scope, locals: &locals) }
            if let f = scope.function(name) {
                let params = functionDecls[f].decl.params
                useCounts[f] += 1
                if params.count != args.count {
                    // The emulator's words when such a call runs.
                    let expected = name + "(" + params.map(\.name).joined(separator: ", ") + ")"
                    return wrongArity(name, nameRange, r, cargs,
                                      failing: "Incorrect number of arguments. Received: \(args.count). Expected: \(expected).")
                }
                if let caller = locals.callerFunction { callees[caller].insert(f) }
                return .call(newNode(r, children: cargs), f, cargs)
            }
            if let b = Builtin(rawValue: name) {
                // `debug` takes any number of values and answers the first, as on the emulator;
                // without one it fails there with a service call error.
                if b == .debug, args.isEmpty {
                    return wrongArity(name, nameRange, r, cargs, failing: "Service call error. Function: [debug], Argument: [].")
                }
                if b.arity != args.count, b != .debug { return wrongArity(name, nameRange, r, cargs) }
                return .builtin(newNode(r, children: cargs), b, cargs)
            }
            warning("Invalid function name: \(name).", nameRange)
            return failingCall(name, nameRange, r, cargs)
        case .method(let base, let name, let args, let r, let nameRange):
            if case .identifier(let ns, _) = base, Builtin.namespaces.contains(ns), locals.slot(ns) == nil, scope.variable(ns) == nil {
                let cargs = args.map { check($0, scope: scope, locals: &locals) }
                guard let b = Builtin(rawValue: ns + "." + name) else {
                    warning("Invalid function name: \(ns).\(name).", nameRange)
                    return failingCall(ns + "." + name, nameRange, r, cargs)
                }
                if b.arity != args.count { return wrongArity(b.rawValue, nameRange, r, cargs) }
                return .builtin(newNode(r, children: cargs), b, cargs)
            }
            let cb = check(base, scope: scope, locals: &locals)
            let cargs = args.map { check($0, scope: scope, locals: &locals) }
            guard let m = Method(rawValue: name) else {
                warning("Invalid function name: \(name).", nameRange)
                return .unknownMethod(newNode(r, children: [cb] + cargs), cb, name)
            }
            if m.arity != args.count {
                warning("Incorrect number of arguments supplied to function: \(name).", nameRange)
                return .unknownMethod(newNode(r, children: [cb] + cargs), cb, name)
            }
            if m == .matches, cargs.count == 1, case .constant(_, .string(let pattern)) = cargs[0] {
                switch RegexCache.shared.regex(pattern, full: true) {
                case .success(let compiled):
                    return .matchesConstant(newNode(r, children: [cb] + cargs), cb, compiled)
                case .failure(let e):
                    warning(e.message + " The call fails at run time.", args[0].range)
                }
            }
            return .method(newNode(r, children: [cb] + cargs), cb, m, cargs)
        case .unary(let op, let x, let r):
            let cx = check(x, scope: scope, locals: &locals)
            let id = newNode(r, children: [cx])
            return op == .not ? .not(id, cx) : .negate(id, cx)
        case .binary(let op, let l, let rhs, let r):
            let cl = check(l, scope: scope, locals: &locals)
            let cr = check(rhs, scope: scope, locals: &locals)
            let id = newNode(r, children: [cl, cr])
            switch op {
            case .and: return .and(id, cl, cr)
            case .or: return .or(id, cl, cr)
            default: return .binary(id, op, cl, cr)
            }
        case .ternary(let c, let y, let n, let r):
            let cc = check(c, scope: scope, locals: &locals)
            let cy = check(y, scope: scope, locals: &locals)
            let cn = check(n, scope: scope, locals: &locals)
            return .ternary(newNode(r, children: [cc, cy, cn]), cc, cy, cn)
        case .isType(let x, let typeName, let r):
            let cx = check(x, scope: scope, locals: &locals)
            guard let t = TypeName(rawValue: typeName) else {
                error("An unsupported type identifier was used with the 'is' operator. Received \(typeName). Expected one of "
                      + "bool,bytes,constraint,duration,float,int,latlng,list,vector,set,number,map,string,timestamp,path,map_diff", r)
                return .isType(newNode(r, children: [cx]), cx, .constraint)
            }
            return .isType(newNode(r, children: [cx]), cx, t)
        }
    }

    /// A call the emulator loads with a warning (a name it does not know, a wrong number of
    /// arguments): the file compiles and the call is an error when evaluated,
    /// `Function not found error: Name: [name].`, or `message` when given (its arguments are not
    /// evaluated).
    private mutating func failingCall(_ name: String, _ nameRange: SourceRange, _ r: SourceRange, _ args: [Node],
                                      message: String? = nil) -> Node {
        let receiver = Node.constant(newNode(nameRange, children: [], literal: true), .bool(true))
        let id = newNode(r, children: [receiver] + args)
        if let message { return .failingCall(id, receiver, message) }
        return .unknownMethod(id, receiver, name)
    }

    /// failing: the run-time message where Hearth words it as the emulator does (user functions);
    /// built-ins still fail with the not-found message (the emulator names their signatures).
    private mutating func wrongArity(_ name: String, _ nameRange: SourceRange, _ r: SourceRange, _ args: [Node],
                                     failing: String? = nil) -> Node {
        warning("Incorrect number of arguments supplied to function: \(name).", nameRange)
        return failingCall(name, nameRange, r, args, message: failing)
    }

    private mutating func resolveIdentifier(_ name: String, _ r: SourceRange, scope: Scope, locals: Locals) -> Node {
        if let slot = locals.slot(name) { return .local(newNode(r, children: []), slot) }
        if let index = scope.variable(name) { return .pathVariable(newNode(r, children: []), index) }
        switch name {
        case "request": return .request(newNode(r, children: []), nil)
        case "resource": return .resource(newNode(r, children: []))
        default:
            if Builtin.namespaces.contains(name) {
                error("'\(name)' is a namespace of functions, not a value.", r)
            } else {
                // Firestore accepts the file and fails the expression at run time; so does Hearth.
                warning("Invalid variable name: \(name).", r)
            }
            return .unknownVariable(newNode(r, children: []), name)
        }
    }
}

extension RulesValue {
    var isString: Bool { if case .string = self { return true }; return false }
}
