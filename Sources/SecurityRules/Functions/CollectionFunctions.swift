// List, set, map and MapDiff methods.

import HearthCore

enum CollectionFunctions {
    /// Whether `v` is one of `items`. Not finding it is certain unless a constraint (a list
    /// request's stand-in for an open value) is involved: then nothing is proven. `strict` for a
    /// list's items, where an int and a float are different values (`1.0 in [1]` is false on the
    /// official emulator), not for a set's (`1.0 in [1].toSet()` is true there, and so is NaN in a
    /// set holding NaN: `RulesValue.setEqual`).
    static func contains(_ items: [RulesValue], _ v: RulesValue, strict: Bool = false) throws(EvalError) -> Bool {
        if strict {
            for item in items where RulesValue.rulesEqual(item, v, strict: true) { return true }
        } else {
            for item in items where RulesValue.setEqual(item, v) { return true }
        }
        if !items.isEmpty, v.holdsConstraint || items.contains(where: \.holdsConstraint) { throw EvalError.unproven }
        return false
    }

    /// The items of `items` that are (`keep` true) or are not in `other`.
    static func filter(_ items: [RulesValue], in other: [RulesValue], keep: Bool, strict: Bool = false) throws(EvalError) -> [RulesValue] {
        var out: [RulesValue] = []
        for v in items where try contains(other, v, strict: strict) == keep { out.append(v) }
        return out
    }

    /// Distinct elements in first-seen order.
    static func distinct(_ items: [RulesValue]) throws(EvalError) -> [RulesValue] {
        var out: [RulesValue] = []
        out.reserveCapacity(items.count)
        for v in items where try !contains(out, v) { out.append(v) }
        return out
    }

    /// The elements of `hasAll`/`hasAny`/`hasOnly`'s argument: a list for a list's (the official
    /// emulator refuses a set there, `Received: list.hasAny(set). Expected: list.hasAny(list).`), a
    /// list or a set for a set's.
    private static func elements(_ v: RulesValue, _ m: Method, on receiver: String = "list") throws(EvalError) -> [RulesValue] {
        switch v {
        case .list(let l): return l
        case .set(let l) where receiver == "set": return l
        default: throw EvalError.signature("\(receiver).\(m.rawValue)", [v], expected: [receiver == "set" ? "set" : "list"])
        }
    }

    private static func setElements(_ v: RulesValue, _ m: Method) throws(EvalError) -> [RulesValue] {
        guard case .set(let l) = v else { throw EvalError.signature("set.\(m.rawValue)", [v], expected: ["set"]) }
        return l
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
        case .hasAll, .hasAny, .hasOnly: return try has(m, l, args[0], strict: true)
        case .join:
            guard case .string(let sep) = args[0] else { throw EvalError.signature("list.join", args, expected: ["string"]) }
            // Items that are not strings are joined as string() writes them (`[1, 2].join(',')` is
            // '1,2' on the official emulator).
            var parts: [String] = []
            for v in l {
                guard case .string(let s) = try OtherFunctions.convert(.string, v) else { continue }
                parts.append(s)
            }
            return .string(parts.joined(separator: sep))
        case .concat:
            guard case .list(let other) = args[0] else { throw EvalError.signature("list.concat", args, expected: ["list"]) }
            return .list(l + other)
        case .removeAll:
            // A list only: the emulator refuses a set (`Received: list.removeAll(set)`).
            guard case .list(let other) = args[0] else { throw EvalError.signature("list.removeAll", args, expected: ["list"]) }
            return .list(try filter(l, in: other, keep: false, strict: true))
        case .toSet: return .set(try distinct(l))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    /// `d.keys().hasAll/hasOnly/hasAny(wanted)` without the key list; nil when `wanted` holds
    /// something other than strings (the general path then decides, with its errors).
    static func keysHave(_ m: Method, _ d: RulesMap, _ wanted: [RulesValue]) -> Bool? {
        switch m {
        case .hasAll, .hasAny:
            var all = true, any = false
            for w in wanted {
                guard case .string(let k) = w else { return nil }
                let present = d[k] != nil
                if present { any = true } else { all = false }
            }
            return m == .hasAll ? all : any
        default:
            // No copy of the names: every item is checked to be a string first (as before, any
            // other item leaves the answer to the general path), then each key is looked for
            // among them, by bytes as everywhere in the rules (`ExactString`).
            for w in wanted {
                guard case .string = w else { return nil }
            }
            for (key, _) in d where !contains(wanted, string: key) { return false }
            return true
        }
    }

    /// Whether `items` (all strings) holds `key`.
    private static func contains(_ items: [RulesValue], string key: String) -> Bool {
        // The same words first (equal bytes, `ExactString.sameWords`): a rules literal and a
        // document's key of the same name are mostly identical small strings, and the byte
        // comparison below was a call per item.
        for item in items {
            if case .string(let s) = item, ExactString.sameWords(s, key) { return true }
        }
        for item in items {
            if case .string(let s) = item, ExactString.equal(s, key) { return true }
        }
        return false
    }

    private static func has(_ m: Method, _ items: [RulesValue], _ arg: RulesValue, strict: Bool = false) throws(EvalError) -> RulesValue {
        let other = try elements(arg, m, on: strict ? "list" : "set")
        switch m {
        case .hasAll:
            for o in other where try !contains(items, o, strict: strict) { return .bool(false) }
            return .bool(true)
        case .hasAny:
            for o in other where try contains(items, o, strict: strict) { return .bool(true) }
            return .bool(false)
        default:
            for i in items where try !contains(other, i, strict: strict) { return .bool(false) }   // hasOnly ignores repeats
            return .bool(true)
        }
    }

    static func set(_ m: Method, _ s: [RulesValue], _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(s.count))
        case .hasAll, .hasAny, .hasOnly: return try has(m, s, args[0])
        // A set's operand must be a set (`Received: set.union(list). Expected: set.union(set).` on
        // the official emulator, where `hasAll`/`hasAny`/`hasOnly` take a list too).
        case .union: return .set(try distinct(s + (try setElements(args[0], m))))
        case .intersection:
            return .set(try filter(s, in: try setElements(args[0], m), keep: true))
        case .difference:
            // A.difference(B) is A \ B, as the reference's example shows.
            return .set(try filter(s, in: try setElements(args[0], m), keep: false))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func map(_ m: Method, _ d: RulesMap, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(d.count))
        // In key order (a RulesMap keeps its keys sorted).
        case .keys: return .list(d.map { .string($0.key) })
        case .values: return .list(d.values)
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
                throw EvalError.signature("map.get", args, expected: ["string, any", "list, any"])
            }
        case .diff:
            guard case .map(let other) = args[0] else { throw EvalError.signature("map.diff", args, expected: ["map"]) }
            return .mapDiff(left: d, right: other)
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func mapDiff(_ m: Method, _ l: RulesMap, _ r: RulesMap) throws(EvalError) -> RulesValue {
        switch m {
        case .addedKeys: return .set(try diffKeys(l, r, [.added]))
        case .removedKeys: return .set(try diffKeys(l, r, [.removed]))
        case .changedKeys: return .set(try diffKeys(l, r, [.changed]))
        case .unchangedKeys: return .set(try diffKeys(l, r, [.unchanged]))
        case .affectedKeys: return .set(try diffKeys(l, r, [.added, .removed, .changed]))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    /// Which keys of a map diff `diffKeys` gives.
    struct DiffKeys: OptionSet {
        let rawValue: UInt8
        /// Only on the left (the map `diff` was called on).
        static let added = DiffKeys(rawValue: 1)
        /// Only on the right.
        static let removed = DiffKeys(rawValue: 2)
        /// On both sides with unequal values.
        static let changed = DiffKeys(rawValue: 4)
        /// On both sides with equal values.
        static let unchanged = DiffKeys(rawValue: 8)
    }

    /// The keys of the kinds `wanted`, in key order, from one walk of both maps together: a
    /// `RulesMap` keeps its entries sorted by their keys' bytes, so one comparison a step finds
    /// which side a key is on. (Looking every key of each side up in the other, then sorting the
    /// union, made `affectedKeys` the largest part of an update's `diff(...).affectedKeys()`.)
    /// Values are compared only when changed or unchanged keys are wanted; unequal is certain
    /// unless a constraint (a list request's stand-in for an open value) is involved: then nothing
    /// is proven, whichever kinds were wanted.
    static func diffKeys(_ l: RulesMap, _ r: RulesMap, _ wanted: DiffKeys) throws(EvalError) -> [RulesValue] {
        let a = l.sortedEntries, b = r.sortedEntries
        let compareValues = wanted.contains(.changed) || wanted.contains(.unchanged)
        var out: [RulesValue] = []
        out.reserveCapacity(wanted == [.added] ? a.count : wanted == [.removed] ? b.count : 4)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            let order = i == a.count ? 1 : j == b.count ? -1 : ExactString.compare(a[i].key, b[j].key)
            if order < 0 {
                if wanted.contains(.added) { out.append(.string(a[i].key)) }
                i += 1
            } else if order > 0 {
                if wanted.contains(.removed) { out.append(.string(b[j].key)) }
                j += 1
            } else {
                if compareValues {
                    if RulesValue.setEqual(a[i].value, b[j].value) {
                        if wanted.contains(.unchanged) { out.append(.string(a[i].key)) }
                    } else {
                        if a[i].value.holdsConstraint || b[j].value.holdsConstraint { throw EvalError.unproven }
                        if wanted.contains(.changed) { out.append(.string(a[i].key)) }
                    }
                }
                i += 1
                j += 1
            }
        }
        return out
    }
}
