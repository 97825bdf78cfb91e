// The module's entry point: compile a rules file once, judge many requests against it.

import HearthCore

/// A compiled, checked rules file.
public final class Ruleset: Sendable {
    /// The rules source as given.
    public let source: String
    /// The file name used in issues and positions.
    public let fileName: String
    /// Warnings found while compiling (a ruleset with errors is never built).
    public let warnings: [RulesIssue]
    /// The service the rules are for (`service cloud.firestore` or `service firebase.storage`).
    public let service: RulesService
    /// `rules_version` (1 or 2).
    public var version: Int { program.version }

    let program: Program

    /// Whether any expression calls get(), exists(), getAfter(), existsAfter() or a cross-service
    /// firestore.get()/exists(): when false, no decision reads a document beyond the request's own
    /// `resource`, so a caller may judge it without a database at hand.
    public let readsDocuments: Bool

    /// Decisions remembered for the methods whose conditions read only the request's auth, method
    /// and path (`MemoAnalysis`); nil when no method's do, or when compiled with `memoize: false`.
    let memo: DecisionMemo?

    /// The remembered decisions' hits and misses so far (both 0 without a memo).
    public var rememberedDecisions: (hits: Int, misses: Int) { memo?.stats ?? (0, 0) }

    /// Whether decisions for `method` are remembered (`MemoAnalysis`). Their conditions read
    /// nothing of the request but its auth, method and path: a caller may leave `time` null.
    public func remembers(_ method: RulesMethod) -> Bool { memo?.methods.contains(MethodSet(method)) ?? false }

    /// Firestore's limit on the size of a rules source.
    static let maxSourceBytes = 256 * 1024

    private init(source: String, fileName: String, service: RulesService, program: Program, warnings: [RulesIssue],
                 memoize: Bool) {
        self.service = service
        self.source = source
        self.fileName = fileName
        self.program = program
        self.warnings = warnings
        readsDocuments = program.code.ops.contains { op in
            switch op {
            case .builtin(.get, _, _), .builtin(.exists, _, _), .builtin(.getAfter, _, _), .builtin(.existsAfter, _, _),
                 .builtin(.firestoreGet, _, _), .builtin(.firestoreExists, _, _):
                return true
            default:
                return false
            }
        }
        let methods = memoize ? MemoAnalysis.memoizable(program) : []
        memo = methods.isEmpty ? nil : DecisionMemo(methods: methods)
    }

    /// Compiles (parse + check). ruleset is nil when any error-severity issue exists; issues hold all
    /// errors and warnings, sorted by position (syntax errors of every statement in one pass).
    ///
    /// service: the service the rules are loaded into. A file may declare both `cloud.firestore` and
    /// `firebase.storage` (as the official emulator allows); only `service`'s blocks then judge (nil:
    /// Firestore's). When the file does not declare `service`, the first service it declares is used
    /// (`Ruleset.service` says which; a caller loading another service's rules must refuse or deny them).
    ///
    /// memoize: remember the decisions of methods whose conditions read only the request's auth,
    /// method and path (`DecisionMemo`; false: every request is evaluated).
    public static func compile(_ source: String, fileName: String = "firestore.rules",
                               service wanted: RulesService? = nil, memoize: Bool = true) -> (ruleset: Ruleset?, issues: [RulesIssue]) {
        let text = SourceText(source)
        if text.bytes.isEmpty {
            // The emulator's words and position (line and column 0) for a file with nothing in it;
            // a file of blanks or comments is refused there too, as a syntax error at its end.
            return (nil, [RulesIssue(fileName: fileName, line: 0, column: 0,
                                     description: "Rules content empty. Compilation aborted.", severity: .error)])
        }
        var issues: [RulesIssue] = []
        if text.bytes.count > maxSourceBytes {
            issues.append(RulesIssue(fileName: fileName, line: 1, column: 1,
                                     description: "The rules source is larger than 256 KB.", severity: .error))
        }
        let (file, parseErrors) = Parser.parse(source)
        for e in parseErrors {
            issues.append(RulesIssue(fileName: fileName, line: e.range.start.line, column: e.range.start.column,
                                     description: e.message, severity: .error))
        }
        let declared = file.services.compactMap { RulesService(rawValue: $0.name) }
        let preferred = wanted ?? .firestore
        let service = declared.contains(preferred) ? preferred : declared.first ?? .firestore
        let (program, diagnostics) = Checker.check(file, text: text, judging: service)
        for d in diagnostics {
            // After a syntax error, a function may look unused only because its caller did not parse.
            if !parseErrors.isEmpty, d.severity == .warning { continue }
            issues.append(RulesIssue(fileName: fileName, line: d.range.start.line, column: d.range.start.column,
                                     description: d.message, severity: d.severity))
        }
        if file.services.isEmpty, parseErrors.isEmpty {
            issues.append(RulesIssue(fileName: fileName, line: 1, column: 1,
                                     description: "No 'service cloud.firestore { … }' block found.", severity: .error))
        }
        issues.sort { ($0.line, $0.column) < ($1.line, $1.column) }
        if issues.contains(where: { $0.severity == .error }) { return (nil, issues) }
        let ruleset = Ruleset(source: source, fileName: fileName, service: service, program: program, warnings: issues,
                              memoize: memoize)
        return (ruleset, issues)
    }

    /// Judges one request. lookup serves get()/exists()/getAfter()/existsAfter(). coverage, when
    /// given, records every expression's outcomes. A denial always comes with its full trace; an
    /// allowed request's trace lists its visited expressions, matches and allows only when `trace`
    /// is true (keeping them costs about as much as the decision).
    public func evaluate(_ request: RulesRequest, lookup: any RulesDocumentLookup, coverage: RulesCoverage? = nil,
                         trace: Bool = false) -> RulesDecision {
        if !trace, let memo, memo.methods.contains(MethodSet(request.method)) {
            return remembered(request, memo: memo, lookup: lookup, coverage: coverage)
        }
        // The lookup as it is, in an enum: no box (`DocumentSource`).
        let source = DocumentSource.lookup(lookup)
        var evaluation = start(request, source: source, coverage: coverage, recording: trace)
        let allowed = settle(&evaluation, request, source: source, coverage: coverage)
        // Moved, not copied, into a constant the trace builder borrows: handing it the variable
        // copied the whole struct (a retain and a release of each of its parts) on every request.
        let finished = consume evaluation
        return decision(finished, allowed: allowed, recording: trace)
    }

    /// Whether `request` is allowed, and the denial's message (empty when allowed): what
    /// `evaluate` decides, without the decision's trace. A remembered decision is read in place
    /// (`evaluate` copies it out, and its caller destroys the copy: ~0.4k instructions a get).
    public func verdict(_ request: RulesRequest, lookup: any RulesDocumentLookup,
                        coverage: RulesCoverage? = nil) -> (allowed: Bool, message: String) {
        if let memo, memo.methods.contains(MethodSet(request.method)) {
            let hash = DecisionMemo.hash(request)
            if let entry = found(request, hash: hash, memo: memo, coverage: coverage) {
                return (entry.decision.allowed, entry.decision.message)
            }
            let decision = evaluateAndRemember(request, hash: hash, memo: memo, lookup: lookup, coverage: coverage)
            return (decision.allowed, decision.message)
        }
        let decision = evaluate(request, lookup: lookup, coverage: coverage)
        return (decision.allowed, decision.message)
    }

    /// A decision of a method `memo` remembers: the remembered one, its evaluation's visits handed
    /// to coverage as the evaluation would have; else evaluated (recording every value, so the
    /// entry can replay them) and remembered unless the evaluation ended in a fatal error.
    private func remembered(_ request: RulesRequest, memo: DecisionMemo, lookup: any RulesDocumentLookup,
                            coverage: RulesCoverage?) -> RulesDecision {
        let hash = DecisionMemo.hash(request)
        if let entry = found(request, hash: hash, memo: memo, coverage: coverage) { return entry.decision }
        return evaluateAndRemember(request, hash: hash, memo: memo, lookup: lookup, coverage: coverage)
    }

    /// The remembered entry for `request`, its visits handed to `coverage`; nil when none is kept.
    @inline(__always)
    private func found(_ request: RulesRequest, hash: UInt64, memo: DecisionMemo, coverage: RulesCoverage?) -> DecisionMemo.Entry? {
        guard let (entry, kept) = memo.find(request, hash: hash) else { return nil }
        if let coverage { replay(entry, kept, memo: memo, into: coverage) }
        return entry
    }

    /// `request` evaluated (recording every value, so an entry can replay them) and remembered
    /// unless the evaluation ended in a fatal error.
    private func evaluateAndRemember(_ request: RulesRequest, hash: UInt64, memo: DecisionMemo,
                                     lookup: any RulesDocumentLookup, coverage: RulesCoverage?) -> RulesDecision {
        var evaluation = Evaluation(program: program, request: request, source: .lookup(lookup), recording: true)
        evaluation.grantDetails = false
        let allowed = evaluation.run()
        let finished = consume evaluation
        coverage?.record(visited: finished.visited, hits: [], hints: nil, ruleset: self)
        let verdict = decision(finished, allowed: allowed, recording: false)
        if finished.fatal == nil {
            memo.insert(DecisionMemo.Entry(hash: hash, request: request, decision: verdict, visits: finished.visited))
        }
        return verdict
    }

    /// Hands a remembered evaluation's visits to `coverage` as an evaluation with its hints would:
    /// a value the hints offer is counted at its entry (`hits`), every other visit is queued for
    /// the fold. Folding them all cost ~1k instructions a remembered get. The split is kept with
    /// the entry for as long as the hints are the same object (`DecisionMemo.Replay`): making it
    /// again on every hit cost ~1.4k more.
    private func replay(_ entry: DecisionMemo.Entry, _ kept: DecisionMemo.Replay?, memo: DecisionMemo,
                        into coverage: RulesCoverage) {
        guard let hints = coverage.hints(for: self) else {
            coverage.record(visited: entry.visits, hits: [], hints: nil, ruleset: self)
            return
        }
        if let kept, kept.serial == hints.serial {
            coverage.record(visited: kept.rest, hits: kept.hits, hints: hints, ruleset: self)
            return
        }
        let split = Self.split(entry.visits, by: hints)
        memo.keep(split, for: entry)
        coverage.record(visited: split.rest, hits: split.hits, hints: hints, ruleset: self)
    }

    /// `visits` split as an evaluation with `hints` would have made them: the visits the hints
    /// offer an entry for, as counts (`hits`), and the others (`rest`).
    static func split(_ visits: [Visit], by hints: CoverageHints) -> DecisionMemo.Replay {
        let offers = hints.offers
        var rest: [Visit] = []
        var hits: [UInt64] = []
        hits.reserveCapacity(visits.count)
        for v in visits {
            if v.prefix == -1, case .value(let value) = v.raw {
                let entry = offers.entry(v.node, value)
                if entry >= 0 {
                    let slot = UInt64(UInt32(v.node)) &* UInt64(RulesCoverage.distinctValuesPerExpression) &+ UInt64(entry)
                    hits.append(UInt64(rest.count) << 32 | slot)
                    continue
                }
            }
            rest.append(v)
        }
        return DecisionMemo.Replay(serial: hints.serial, rest: rest, hits: hits)
    }

    /// recording: keep every visited value even when the request is allowed (test reports).
    /// Without it, and without coverage, an allowed request keeps no values (its trace lists the
    /// matches and allow statements only) and a denied one is judged again with recording on, so
    /// its message can explain the failure: denials pay twice, grants pay nothing for traces.
    func evaluate(_ request: RulesRequest, accessor: any DocumentAccessor, coverage: RulesCoverage?,
                  recording: Bool = false) -> (decision: RulesDecision, evaluation: Evaluation) {
        let source = DocumentSource.accessor(accessor)
        var evaluation = start(request, source: source, coverage: coverage, recording: recording)
        let allowed = settle(&evaluation, request, source: source, coverage: coverage)
        let finished = consume evaluation
        return (decision(finished, allowed: allowed, recording: recording), finished)
    }

    @inline(__always)
    private func start(_ request: RulesRequest, source: DocumentSource, coverage: RulesCoverage?,
                       recording: Bool) -> Evaluation {
        // Coverage alone lets the evaluator count the values it has seen before itself
        // (`CoverageHints`); a trace asked for needs every value.
        var e = Evaluation(program: program, request: request, source: source,
                           recording: recording || coverage != nil,
                           hints: recording ? nil : coverage?.hints(for: self))
        // A grant's details are built only for a trace asked for (`decision`).
        e.grantDetails = recording
        return e
    }

    /// Runs `evaluation`, records it for coverage, and replaces a denial's evaluation with one
    /// that kept every value (its message explains the failure). True when granted.
    @inline(__always)
    private func settle(_ evaluation: inout Evaluation, _ request: RulesRequest, source: DocumentSource,
                        coverage: RulesCoverage?) -> Bool {
        var allowed = evaluation.run()
        // The evaluation's parts, not the evaluation: passing it on whole copied it.
        coverage?.record(visited: evaluation.visited, hits: evaluation.hits, hints: evaluation.hints, ruleset: self)
        if !allowed, !evaluation.recording || !evaluation.hits.isEmpty {
            evaluation = Evaluation(program: program, request: request, source: source, recording: true)
            allowed = evaluation.run()
            assert(!allowed, "the fast evaluation denied what the recorded one allows")
        }
        return allowed
    }

    @inline(__always)
    private func decision(_ evaluation: borrowing Evaluation, allowed: Bool, recording: Bool) -> RulesDecision {
        // Coverage records values, but a grant's details are built only when asked for: nobody
        // reads them otherwise, and building them cost half as much as the decision.
        let (trace, message) = TraceBuilder.build(evaluation, allowed: allowed, details: recording || !allowed)
        return RulesDecision(allowed: allowed, message: message, trace: trace)
    }
}

/// The verdict on one request.
public struct RulesDecision: Sendable {
    /// Whether some allow statement granted the request.
    public let allowed: Bool
    /// For denials, Firestore's message (`false for 'create' @ L5`, `Null value error. for 'list' @ L11`;
    /// several failed allows joined with ", "), then a newline and Hearth's trace of each allow
    /// tried and why it failed. "No matching allow statements" when no allow covered the request.
    /// Empty when allowed.
    public let message: String
    /// Matches with bindings, allows tried, visited expressions with positions and values.
    public let trace: RulesTrace
}
