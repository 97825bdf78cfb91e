// What one evaluation did: the blocks that matched, the allow statements tried and why each
// failed, and every expression visited with its value.

/// The record of one evaluation.
public struct RulesTrace: Sendable {
    /// A path variable and the value it was bound to.
    public struct Binding: Sendable, Equatable {
        public let name: String
        public let value: RulesValue
    }

    /// A match block whose full path matched the request path.
    public struct Match: Sendable {
        /// The block's full pattern, e.g. `/databases/{database}/documents/users/{uid}`.
        public let pattern: String
        public let line: Int
        public let column: Int
        public let bindings: [Binding]
    }

    /// How an allow statement ended.
    public enum Outcome: Sendable, Equatable {
        case allowed
        case denied
        case error(String)
    }

    /// An allow statement that covered the request's method and was evaluated.
    public struct Allow: Sendable {
        public let line: Int
        public let column: Int
        public let methods: [String]
        /// The pattern of the block it sits in.
        public let pattern: String
        public let outcome: Outcome
        /// Why it failed, one line per culprit expression (`L12:25 \`…\` was false: null == "abc"`).
        public let explanation: [String]
    }

    /// A value or an error message.
    public enum Value: Sendable, Equatable {
        case value(RulesValue)
        case error(String)
    }

    /// An expression that was evaluated, with its position and result.
    public struct VisitedExpression: Sendable {
        public let line: Int
        public let column: Int
        public let endLine: Int
        public let endColumn: Int
        /// Source text of the expression (whitespace collapsed).
        public let text: String
        public let value: Value
    }

    /// A call of get(), exists(), getAfter() or existsAfter().
    public struct FunctionCall: Sendable {
        public let function: String
        public let arguments: [RulesValue]
    }

    public let matches: [Match]
    public let allows: [Allow]
    public let debugMessages: [String]
    public let functionCalls: [FunctionCall]
    /// A limit error that denied the whole request, if any.
    public let fatalError: String?

    let program: Program?
    let raw: [Visit]

    /// Every expression evaluated (literals excluded), in evaluation order (operands before operators).
    public var visitedExpressions: [VisitedExpression] {
        guard let program else { return [] }
        return raw.map { visit in
            let r = program.nodes[Int(visit.node)].range
            let v: Value = switch visit.traced {
            case .value(let x): .value(x)
            case .error(let e): .error(e.message)
            }
            return VisitedExpression(line: r.start.line, column: r.start.column, endLine: r.end.line,
                                     endColumn: r.end.column, text: program.text.snippet(r), value: v)
        }
    }

    /// The trace as text, one line per match and allow (with indented explanations).
    public var lines: [String] {
        var out: [String] = []
        for m in matches {
            let b = m.bindings.map { "\($0.name)=\($0.value.rendered)" }.joined(separator: ", ")
            out.append("match \(m.pattern) @ L\(m.line)" + (b.isEmpty ? "" : " with \(b)"))
        }
        for a in allows {
            let what: String = switch a.outcome {
            case .allowed: "allowed"
            case .denied: "false"
            case .error(let e): "error: \(e)"
            }
            out.append("allow \(a.methods.joined(separator: ", ")) @ L\(a.line):\(a.column) in \(a.pattern): \(what)")
            out.append(contentsOf: a.explanation.map { "  " + $0 })
        }
        if let fatalError { out.append("denied: \(fatalError)") }
        return out
    }

    static let empty = RulesTrace(matches: [], allows: [], debugMessages: [], functionCalls: [], fatalError: nil, program: nil, raw: [])
}

/// Builds the trace and the Firestore-style message from a finished evaluation.
enum TraceBuilder {
    /// `details: false` reports a grant without matches, allows and values even when they were
    /// recorded (for coverage).
    static func build(_ e: Evaluation, allowed: Bool, details: Bool = true) -> (RulesTrace, String) {
        let program = e.program
        // An allowed request judged without recording reports no details (nobody reads them).
        if allowed, !e.recording || !details {
            // debug() output and document accesses are kept: they cost nothing unless used.
            let trace = RulesTrace(matches: [], allows: [], debugMessages: e.debugMessages,
                                   functionCalls: e.functionCalls.map { RulesTrace.FunctionCall(function: $0.0, arguments: $0.1) },
                                   fatalError: nil, program: nil, raw: [])
            return (trace, "")
        }
        let matches = e.instances.map { inst in
            RulesTrace.Match(pattern: inst.pattern, line: inst.block.range.start.line, column: inst.block.range.start.column,
                             bindings: zip(inst.names, e.bindings(of: inst)).map { RulesTrace.Binding(name: $0, value: $1) })
        }
        var allows: [RulesTrace.Allow] = []
        for attempt in e.attempts {
            let outcome: RulesTrace.Outcome
            var explanation: [String] = []
            switch attempt.result {
            case .value(.bool(true)): outcome = .allowed
            case .error(let err):
                outcome = .error(err.message)
                explanation = explain(attempt, e)
            case .value(let v):
                outcome = .denied
                explanation = explain(attempt, e)
                if case .bool = v {} else {
                    explanation.append("the condition evaluated to \(v.rendered), not a bool")
                }
            case nil:
                outcome = .denied
            }
            let r = attempt.allow.range
            allows.append(RulesTrace.Allow(line: r.start.line, column: r.start.column, methods: attempt.allow.methodNames,
                                           pattern: e.instances[attempt.instance].pattern, outcome: outcome, explanation: explanation))
        }
        let trace = RulesTrace(matches: matches, allows: allows, debugMessages: e.debugMessages,
                               functionCalls: e.functionCalls.map { RulesTrace.FunctionCall(function: $0.0, arguments: $0.1) },
                               fatalError: e.fatal?.message, program: program, raw: e.visited)
        if allowed { return (trace, "") }
        if e.attempts.isEmpty { return (trace, "No matching allow statements") }
        let method = e.request.method.rawValue
        let heads = e.attempts.map { a -> String in
            let what: String = switch a.result {
            case .error(let err): err.message
            case .value(.bool(false)), nil: "false"
            case .value(let v): EvalError.notBool(v).message
            }
            return "\(what) for '\(method)' @ L\(a.allow.range.start.line)"
        }
        var message = heads.joined(separator: ", ")
        message += "\n" + trace.lines.joined(separator: "\n")
        return (trace, message)
    }

    /// Lines naming the expressions that made an allow statement fail.
    static func explain(_ attempt: AllowAttempt, _ e: Evaluation) -> [String] {
        // Without recorded values there is nothing to explain (an allowed request judged fast).
        guard e.recording, let condition = attempt.allow.condition else { return [] }
        var values: [Int32: TracedRaw] = [:]
        for visit in e.visited[attempt.visited] { values[visit.node] = visit.traced }
        var out: [String] = []
        var explainer = Explainer(program: e.program, values: values)
        explainer.explain(condition, into: &out, depth: 0)
        return out
    }
}

private struct Explainer {
    let program: Program
    let values: [Int32: TracedRaw]

    func isFalse(_ n: Node) -> Bool {
        if case .constant(_, .bool(false)) = n { return true }
        if case .value(.bool(false))? = values[n.id] { return true }
        return false
    }

    func isTrue(_ n: Node) -> Bool {
        if case .constant(_, .bool(true)) = n { return true }
        if case .value(.bool(true))? = values[n.id] { return true }
        return false
    }

    func isError(_ n: Node) -> Bool {
        if case .error? = values[n.id] { return true }
        return false
    }

    func valueText(_ n: Node) -> String {
        if case .constant(_, let v) = n { return v.rendered }
        switch values[n.id] {
        case .value(let v)?: return v.rendered
        case .error(let e)?: return "error (\(e.message))"
        case nil: return "(not evaluated)"
        }
    }

    func position(_ n: Node) -> String {
        let r = program.nodes[Int(n.id)].range
        return "L\(r.start.line):\(r.start.column)"
    }

    func text(_ n: Node) -> String { program.text.snippet(program.nodes[Int(n.id)].range) }

    mutating func explain(_ n: Node, into out: inout [String], depth: Int) {
        guard depth < 40 else { return }
        let failedByError = isError(n)
        switch n {
        case .and(_, let l, let r):
            if failedByError {
                for x in [l, r] where isError(x) { explain(x, into: &out, depth: depth + 1); return }
            }
            for x in [l, r] where isFalse(x) { explain(x, into: &out, depth: depth + 1); return }
            leaf(n, into: &out)
        case .or(_, let l, let r):
            for x in [l, r] where isFalse(x) || isError(x) { explain(x, into: &out, depth: depth + 1) }
        case .ternary(_, let c, let yes, let no):
            if isError(c) { explain(c, into: &out, depth: depth + 1); return }
            explain(isTrue(c) ? yes : no, into: &out, depth: depth + 1)
        case .call(_, let index, _):
            let f = program.functions[index]
            for l in f.lets where isError(l) {
                out.append("\(position(n)) in \(f.name)():")
                explain(l, into: &out, depth: depth + 1)
                return
            }
            if values[f.body.id] != nil || isConstant(f.body) {
                out.append("\(position(n)) `\(text(n))` was \(failedByError ? "an error" : valueText(n)); in \(f.name)():")
                explain(f.body, into: &out, depth: depth + 1)
            } else {
                leaf(n, into: &out)
            }
        default:
            leaf(n, into: &out)
        }
    }

    func isConstant(_ n: Node) -> Bool { if case .constant = n { return true }; return false }

    func leaf(_ n: Node, into out: inout [String]) {
        let head = "\(position(n)) `\(text(n))`"
        if case .error(let e)? = values[n.id] {
            var line = "\(head) failed: \(e.message)"
            if e.nodeID >= 0, e.nodeID != n.id {
                let r = program.nodes[Int(e.nodeID)].range
                line += " (at L\(r.start.line):\(r.start.column) `\(program.text.snippet(r, limit: 60))`)"
                if let origin = firstChildValue(ofErrorAt: e.nodeID) { line += "; " + origin }
            } else if let origin = firstChildValue(ofErrorAt: n.id) {
                line += "; " + origin
            }
            out.append(line)
            return
        }
        let value = valueText(n)
        switch n {
        case .binary(_, let op, let l, let r):
            out.append("\(head) was \(value): \(valueText(l)) \(op.rawValue) \(valueText(r))")
        case .isType(_, let x, let t):
            out.append("\(head) was \(value): \(valueText(x)) is not \(t.rawValue)")
        case .not(_, let x):
            out.append("\(head) was \(value): \(text(x)) is \(valueText(x))")
        case .matchesConstant(_, let recv, _):
            out.append("\(head) was \(value): \(valueText(recv)) does not match")
        case .method(_, let recv, let m, let args):
            out.append("\(head) was \(value): \(valueText(recv)).\(m.rawValue)(\(args.map(valueText).joined(separator: ", ")))")
        default:
            out.append("\(head) was \(value)")
        }
    }

    /// For an error raised at a member access or call, the value it was applied to (`request.auth is null`).
    func firstChildValue(ofErrorAt id: Int32) -> String? {
        let info = program.nodes[Int(id)]
        guard let child = info.children.first, let v = values[child] else { return nil }
        let snippet = program.text.snippet(program.nodes[Int(child)].range, limit: 60)
        if case .value(let x) = v { return "`\(snippet)` is \(x.rendered)" }
        return nil
    }
}
