import Testing
import HearthCore
@testable import SecurityRules

/// `diff()`'s key sets come from one walk of both maps in key order (`CollectionFunctions.diffKeys`);
/// they must be what looking each key up in the other map gives, with the same errors.
struct MapDiffTests {
    /// Keys that differ only in spelling (NFC/NFD, Kelvin sign and K), share prefixes, or are empty.
    static let keys = ["", "a", "ab", "b", "K", "\u{212A}", "é", "e\u{301}", "status", "size", "s3Key", "createdAt", "z"]
    static let values: [RulesValue] = [.int(1), .float(1), .string("x"), .string("y"), .null, .bool(true),
                                       .map(["a": .int(1)]), .list([.int(1)]), .timestamp(seconds: 1, nanos: 0)]

    /// The lookups the diff made before the walk: keys of one side missing on the other, keys on
    /// both whose values are unequal (an error when a constraint is involved), sorted by bytes.
    static func reference(_ m: Method, _ l: RulesMap, _ r: RulesMap) -> Result<[String], EvalError> {
        func changed() -> Result<[String], EvalError> {
            var out: [String] = []
            for (k, v) in l {
                guard let w = r[k], !RulesValue.rulesEqual(v, w) else { continue }
                if v.holdsConstraint || w.holdsConstraint { return .failure(EvalError.unproven) }
                out.append(k)
            }
            return .success(out)
        }
        let added = l.filter { r[$0.key] == nil }.map(\.key)
        let removed = r.filter { l[$0.key] == nil }.map(\.key)
        switch m {
        case .addedKeys: return .success(added)
        case .removedKeys: return .success(removed)
        case .changedKeys: return changed()
        case .unchangedKeys:
            return changed().map { c in l.filter { k, _ in r[k] != nil && !c.contains { ExactString.equal($0, k) } }.map(\.key) }
        default:
            return changed().map { c in (c + added + removed).sorted { ExactString.compare($0, $1) < 0 } }
        }
    }

    static func randomMap(_ rng: inout FuzzTests.SplitMix, constraint: Bool) -> RulesMap {
        var entries: [(String, RulesValue)] = []
        for k in keys where rng.next() % 3 == 0 {
            var v = values[Int(rng.next() % UInt64(values.count))]
            if constraint, rng.next() % 5 == 0 { v = Evaluation.anyDocumentID }
            entries.append((k, v))
        }
        return RulesMap(uniqueKeysWithValues: entries)
    }

    @Test func theWalkGivesTheLookupsKeysAndErrors() {
        var rng = FuzzTests.SplitMix(state: 20)
        let methods: [Method] = [.addedKeys, .removedKeys, .changedKeys, .unchangedKeys, .affectedKeys]
        var errors = 0
        for round in 0..<3_000 {
            let l = Self.randomMap(&rng, constraint: round % 4 == 0)
            // Half the rounds diff against a near copy, so most keys are on both sides.
            var r = round % 2 == 0 ? l : Self.randomMap(&rng, constraint: round % 4 == 1)
            if round % 2 == 0, let k = Self.keys.randomElement(using: &rng) { r[k] = Self.values.randomElement(using: &rng) }
            for m in methods {
                let expected = Self.reference(m, l, r)
                let got: Result<RulesValue, EvalError>
                do throws(EvalError) { got = .success(try CollectionFunctions.mapDiff(m, l, r)) } catch { got = .failure(error) }
                switch (expected, got) {
                case (.success(let keys), .success(.set(let items))):
                    #expect(items.count == keys.count && zip(items, keys).allSatisfy { item, k in
                        if case .string(let s) = item { return ExactString.equal(s, k) }
                        return false
                    }, "\(m) of \(l) and \(r)")
                case (.failure(let e), .failure(let f)):
                    #expect(e.message == f.message)
                    errors += 1
                default:
                    Issue.record("\(m) of \(l) and \(r): expected \(expected), got \(got)")
                }
            }
        }
        #expect(errors > 0, "no round met a constraint in a changed pair")
    }
}

/// The fuzz tests' seeded generator, so a failing round can be replayed.
extension FuzzTests.SplitMix: RandomNumberGenerator {}
