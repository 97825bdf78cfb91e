// List, set, map and MapDiff methods.

enum CollectionFunctions {
    static func contains(_ items: [RulesValue], _ v: RulesValue) -> Bool {
        items.contains { RulesValue.rulesEqual($0, v) }
    }

    /// Distinct elements in first-seen order.
    static func distinct(_ items: [RulesValue]) -> [RulesValue] {
        var out: [RulesValue] = []
        out.reserveCapacity(items.count)
        for v in items where !contains(out, v) { out.append(v) }
        return out
    }

    /// The elements of a list or set argument.
    private static func elements(_ v: RulesValue, _ m: Method) throws(EvalError) -> [RulesValue] {
        switch v {
        case .list(let l), .set(let l): return l
        default: throw EvalError.invalidArgument(m.rawValue, "list or set expected, got \(v.typeName)")
        }
    }

    static func bounds(_ lo: Int64?, _ hi: Int64?, _ count: Int) throws(EvalError) -> (Int, Int) {
        let a = lo ?? 0, b = hi ?? Int64(count)
        guard a >= 0, b <= Int64(count), a <= b else {
            throw EvalError("Index out of range error: slice [\(a):\(b)] of size \(count).")
        }
        return (Int(a), Int(b))
    }

    static func list(_ m: Method, _ l: [RulesValue], _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(l.count))
        case .hasAll, .hasAny, .hasOnly: return try has(m, l, args[0])
        case .join:
            guard case .string(let sep) = args[0] else { throw EvalError.invalidArgument("join", "string separator expected") }
            var parts: [String] = []
            for v in l {
                guard case .string(let s) = v else { throw EvalError.invalidArgument("join", "list of strings expected") }
                parts.append(s)
            }
            return .string(parts.joined(separator: sep))
        case .concat:
            guard case .list(let other) = args[0] else { throw EvalError.invalidArgument("concat", "list expected, got \(args[0].typeName)") }
            return .list(l + other)
        case .removeAll:
            let other = try elements(args[0], m)
            return .list(l.filter { !contains(other, $0) })
        case .toSet: return .set(distinct(l))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    private static func has(_ m: Method, _ items: [RulesValue], _ arg: RulesValue) throws(EvalError) -> RulesValue {
        let other = try elements(arg, m)
        switch m {
        case .hasAll: return .bool(other.allSatisfy { contains(items, $0) })
        case .hasAny: return .bool(other.contains { contains(items, $0) })
        default: return .bool(items.allSatisfy { contains(other, $0) })   // hasOnly ignores repeats
        }
    }

    static func set(_ m: Method, _ s: [RulesValue], _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(s.count))
        case .hasAll, .hasAny, .hasOnly: return try has(m, s, args[0])
        case .union: return .set(distinct(s + (try elements(args[0], m))))
        case .intersection:
            let other = try elements(args[0], m)
            return .set(s.filter { contains(other, $0) })
        case .difference:
            // A.difference(B) is A \ B, as the reference's example shows.
            let other = try elements(args[0], m)
            return .set(s.filter { !contains(other, $0) })
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func map(_ m: Method, _ d: [String: RulesValue], _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(d.count))
        case .keys: return .list(d.keys.sorted().map { .string($0) })
        case .values: return .list(d.keys.sorted().map { d[$0]! })
        case .get:
            switch args[0] {
            case .string(let k): return d[k] ?? args[1]
            case .list(let path):
                // get(['a', 'b'], default) walks nested maps.
                var current = RulesValue.map(d)
                for p in path {
                    guard case .string(let k) = p else { throw EvalError.invalidArgument("get", "keys must be strings") }
                    guard case .map(let inner) = current, let next = inner[k] else { return args[1] }
                    current = next
                }
                return current
            default:
                throw EvalError.invalidArgument("get", "string or list key expected, got \(args[0].typeName)")
            }
        case .diff:
            guard case .map(let other) = args[0] else { throw EvalError.invalidArgument("diff", "map expected, got \(args[0].typeName)") }
            return .mapDiff(left: d, right: other)
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func mapDiff(_ m: Method, _ l: [String: RulesValue], _ r: [String: RulesValue]) throws(EvalError) -> RulesValue {
        func keys(_ include: (String) -> Bool, _ from: [String: RulesValue]) -> RulesValue {
            .set(from.keys.sorted().filter(include).map { .string($0) })
        }
        switch m {
        case .addedKeys: return keys({ r[$0] == nil }, l)
        case .removedKeys: return keys({ l[$0] == nil }, r)
        case .changedKeys: return keys({ k in r[k].map { !RulesValue.rulesEqual(l[k]!, $0) } ?? false }, l)
        case .unchangedKeys: return keys({ k in r[k].map { RulesValue.rulesEqual(l[k]!, $0) } ?? false }, l)
        case .affectedKeys:
            let changed = l.keys.filter { k in r[k].map { !RulesValue.rulesEqual(l[k]!, $0) } ?? true }
            let removed = r.keys.filter { l[$0] == nil }
            return .set((changed + removed).sorted().map { .string($0) })
        default: throw EvalError.noFunction(m.rawValue)
        }
    }
}
