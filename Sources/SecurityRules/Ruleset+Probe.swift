// Evaluating a single expression, for tests and tools (`hearth rules eval` could build on it).

extension Ruleset {
    /// Evaluates `expression` inside `match /databases/{database}/documents/{document=**}` for a
    /// request (default: an unauthenticated get of `databases/(default)/documents/probe/doc`).
    /// Compile errors come back as the first error issue's description.
    static func probe(_ expression: String, request: RulesRequest? = nil, lookup: (any RulesDocumentLookup)? = nil,
                      version: Int = 2) -> Result<RulesValue, EvalError> {
        let source = """
        rules_version = '\(version)';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /{document=**} {
              function probe__() {
                return \(expression);
              }
              allow read: if probe__() != null;
            }
          }
        }
        """
        let (ruleset, issues) = compile(source, fileName: "probe.rules")
        guard let ruleset else {
            return .failure(EvalError("compile: " + (issues.first { $0.severity == .error }?.description ?? "?")))
        }
        let req = request ?? RulesRequest(method: .get, path: ["databases", "(default)", "documents", "probe", "doc"],
                                          auth: nil, time: .timestamp(seconds: 1_700_000_000, nanos: 0))
        let accessor: any DocumentAccessor = lookup.map { LookupAccessor(lookup: $0) } ?? LookupAccessor(lookup: EmptyLookup())
        let documentPath = Array(req.path.dropFirst(3))
        let bindings: [RulesValue] = [.string(req.path.count > 1 ? req.path[1] : ""), .path(documentPath)]
        // Both evaluation modes run, so every expression test also checks that the fast paths taken
        // without recording (string chains, keys().has…) agree with the plain ones.
        func run(recording: Bool) -> Result<RulesValue, EvalError> {
            var evaluation = Evaluation(program: ruleset.program, request: req, accessor: accessor, recording: recording)
            do throws(EvalError) {
                return .success(try evaluation.evaluate(ruleset.program.functions[0].body, bindings: bindings))
            } catch {
                return .failure(error)
            }
        }
        let recorded = run(recording: true), fast = run(recording: false)
        switch (recorded, fast) {
        case (.success(let a), .success(let b)) where a == b: return recorded
        case (.failure(let a), .failure(let b)) where a.fatal == b.fatal: return recorded
        default: return .failure(EvalError("fast evaluation disagrees: recorded \(recorded), fast \(fast)"))
        }
    }
}

/// A lookup with no documents.
struct EmptyLookup: RulesDocumentLookup {
    func get(_ path: [String]) -> RulesValue? { nil }
    func getAfter(_ path: [String]) -> RulesValue? { nil }
}
