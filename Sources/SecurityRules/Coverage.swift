// Rule coverage, like the Firebase emulator's `:ruleCoverage` report: how often each expression
// evaluated to each value, across every request judged with this collector.

import Foundation
import HearthCore

/// Collects expression outcomes across evaluations. Thread-safe.
public final class RulesCoverage: @unchecked Sendable {
    /// One expression's outcomes, kept as values and rendered only when a report is asked for.
    private struct NodeOutcomes {
        var entries: [(value: TracedRaw, count: Int)] = []
        var others = 0
    }

    /// The outcomes of one ruleset's expressions, indexed by node id.
    private final class Table {
        var nodes: [NodeOutcomes]
        init(count: Int) { nodes = Array(repeating: NodeOutcomes(), count: count) }
    }

    private let lock = NSLock()
    /// Per ruleset (rules may be reloaded).
    private var tables: [ObjectIdentifier: Table] = [:]

    /// An empty collector.
    public init() {}

    /// Forgets everything recorded.
    public func reset() {
        lock.lock()
        tables.removeAll()
        lock.unlock()
    }

    /// Distinct values kept per expression; beyond it further values are counted together, so a
    /// value that changes on every request (`request.time`) cannot grow the table without bound.
    static let distinctValuesPerExpression = 32
    static let otherValuesKey = "…"

    func record(_ e: Evaluation, ruleset: Ruleset) {
        // Values are compared, not rendered: rendering every visited value (the whole request data
        // map, many times) cost more than the evaluation. Equal values keep one entry; rendering
        // and JSON happen in `snapshot`, when a report is requested.
        var proven = EqualityMemo()
        let key = ObjectIdentifier(ruleset)
        lock.lock()
        defer { lock.unlock() }
        let table: Table
        if let t = tables[key] {
            table = t
        } else {
            table = Table(count: ruleset.program.nodes.count)
            tables[key] = table
        }
        for (id, raw) in e.visited {
            let i = Int(id)
            guard i >= 0, i < table.nodes.count else { continue }
            var found = -1
            for (k, entry) in table.nodes[i].entries.enumerated() where proven.same(entry.value, raw) {
                found = k
                break
            }
            if found >= 0 {
                table.nodes[i].entries[found].count += 1
                // The newest equal value becomes the representative, so the next visits of this
                // request (same storage) compare by identity.
                table.nodes[i].entries[found].value = raw
            } else if table.nodes[i].entries.count < Self.distinctValuesPerExpression {
                table.nodes[i].entries.append((raw, 1))
            } else {
                table.nodes[i].others += 1
            }
        }
    }

    /// Equality of recorded outcomes, remembering which map/list storages were already found equal
    /// during one `record` (one request visits the same data map at many expressions).
    private struct EqualityMemo {
        private var pairs: [(UInt, UInt)] = []

        mutating func same(_ a: TracedRaw, _ b: TracedRaw) -> Bool {
            switch (a, b) {
            case (.error(let x), .error(let y)): return x.message == y.message
            case (.value(let x), .value(let y)): return same(x, y)
            default: return false
            }
        }

        mutating func same(_ a: RulesValue, _ b: RulesValue) -> Bool {
            switch (a, b) {
            case (.bool(let x), .bool(let y)): return x == y
            case (.string(let x), .string(let y)): return x == y
            case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern || x == y
            case (.map(let x), .map(let y)):
                return storage(x, y, unsafeBitCast(x, to: UInt.self), unsafeBitCast(y, to: UInt.self))
            case (.list(let x), .list(let y)):
                return storage(x, y, unsafeBitCast(x, to: UInt.self), unsafeBitCast(y, to: UInt.self))
            default: return a == b
            }
        }

        /// Same storage (a Dictionary or Array is one reference), or proven equal before, or equal.
        private mutating func storage<T: Equatable>(_ x: T, _ y: T, _ ix: UInt, _ iy: UInt) -> Bool {
            if ix == iy { return true }
            for (p, q) in pairs where (p == ix && q == iy) || (p == iy && q == ix) { return true }
            guard x == y else { return false }
            pairs.append((ix, iy))
            return true
        }
    }

    private struct Outcome {
        var json: JSON?
        var error: String?
        var count: Int
    }

    /// node id → rendered outcome key → outcome, as the reports read it.
    private func snapshot(_ ruleset: Ruleset) -> [Int32: [String: Outcome]] {
        lock.lock()
        let nodes = tables[ObjectIdentifier(ruleset)]?.nodes ?? []
        lock.unlock()
        var out: [Int32: [String: Outcome]] = [:]
        for (i, n) in nodes.enumerated() where !n.entries.isEmpty || n.others > 0 {
            var m: [String: Outcome] = [:]
            for (raw, count) in n.entries {
                switch raw {
                case .value(let v): m[v.rendered, default: Outcome(json: v.json, error: nil, count: 0)].count += count
                case .error(let e): m["error:" + e.message, default: Outcome(json: nil, error: e.message, count: 0)].count += count
                }
            }
            if n.others > 0 { m[Self.otherValuesKey] = Outcome(json: .string("(other values)"), error: nil, count: n.others) }
            out[Int32(i)] = m
        }
        return out
    }

    /// `{"rules": {"files": [{name, content}]}, "report": [ExpressionReport]}`: every non-literal
    /// expression with its source position and a count per outcome value, nested as the AST is.
    public func json(for ruleset: Ruleset) -> JSON {
        let table = snapshot(ruleset)
        let report = ExpressionReports.build(ruleset, visitedOnly: false) { id in
            (table[id] ?? [:]).sorted { $0.key < $1.key }.map { _, o in
                var members: [(String, JSON)] = []
                if let json = o.json { members.append(("value", json)) }
                if let error = o.error { members.append(("error", .string(error))) }
                members.append(("count", .int(Int64(o.count))))
                return .object(JSONObject(members))
            }
        }
        return .object(JSONObject([
            ("rules", .object(JSONObject([("files", .array([.object(JSONObject([
                ("name", .string(ruleset.fileName)), ("content", .string(ruleset.source)),
            ]))]))]))),
            ("report", .array(report)),
        ]))
    }

    /// The rules source as an HTML page, each expression marked with how it evaluated.
    public func html(for ruleset: Ruleset) -> String {
        let table = snapshot(ruleset)
        let program = ruleset.program
        // Open and close tags at byte offsets; AST ranges nest, so the markup is well formed.
        var opens: [Int: [(Int, String)]] = [:]
        var closes: [Int: Int] = [:]
        for (i, info) in program.nodes.enumerated() where !info.isLiteral {
            let outcomes = table[Int32(i)] ?? [:]
            let cls: String
            let trues = outcomes["true"]?.count ?? 0, falses = outcomes["false"]?.count ?? 0
            let errors = outcomes.filter { $0.key.hasPrefix("error:") }.values.reduce(0) { $0 + $1.count }
            if outcomes.isEmpty { cls = "unvisited" } else if errors > 0 { cls = "error" }
            else if trues > 0, falses > 0 { cls = "both" } else if trues > 0 { cls = "true" }
            else if falses > 0 { cls = "false" } else { cls = "value" }
            let title = outcomes.isEmpty ? "never evaluated"
                : outcomes.sorted { $0.key < $1.key }.map { "\($0.value.error.map { "error: \($0)" } ?? $0.key) × \($0.value.count)" }
                    .joined(separator: "\n")
            let len = info.range.end.offset - info.range.start.offset
            opens[info.range.start.offset, default: []].append((len, "<span class=\"\(cls)\" title=\"\(escape(title))\">"))
            closes[info.range.end.offset, default: 0] += 1
        }
        let bytes = program.text.bytes
        var body = ""
        var line = 1
        body += "<span class=\"ln\">1</span>"
        var i = 0
        while i <= bytes.count {
            if let n = closes[i] { body += String(repeating: "</span>", count: n) }
            if let o = opens[i] { for (_, tag) in o.sorted(by: { $0.0 > $1.0 }) { body += tag } }
            guard i < bytes.count else { break }
            var j = i
            // Copy one UTF-8 character.
            j += 1
            while j < bytes.count, bytes[j] & 0xC0 == 0x80 { j += 1 }
            let ch = String(decoding: bytes[i..<j], as: UTF8.self)
            body += escape(ch)
            if ch == "\n" {
                line += 1
                body += "<span class=\"ln\">\(line)</span>"
            }
            i = j
        }
        return """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>Rule coverage: \(escape(ruleset.fileName))</title>
        <style>
        body { font-family: -apple-system, sans-serif; margin: 2em; }
        pre { font-family: Menlo, Consolas, monospace; font-size: 13px; line-height: 1.5; }
        .ln { display: inline-block; width: 3em; color: #999; user-select: none; }
        .true { background: rgba(0, 160, 0, 0.12); } .false { background: rgba(220, 0, 0, 0.12); }
        .both { background: rgba(230, 180, 0, 0.15); } .error { background: rgba(220, 0, 0, 0.25); text-decoration: underline wavy red; }
        .value { background: rgba(0, 90, 200, 0.08); } .unvisited { color: #777; }
        </style></head><body>
        <h1>Rule coverage: \(escape(ruleset.fileName))</h1>
        <p>Hover an expression for its outcomes. Green: only true; red: only false; yellow: both; underlined: errors; grey: never evaluated.</p>
        <pre>\(body)</pre>
        </body></html>
        """
    }

    private func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

/// Rules API `ExpressionReport` trees.
enum ExpressionReports {
    /// Reports rooted at each allow condition, let and function body, in source order; literals omitted
    /// (their non-literal descendants are lifted to the nearest reported ancestor).
    static func build(_ ruleset: Ruleset, visitedOnly: Bool, values: (Int32) -> [JSON]) -> [JSON] {
        let program = ruleset.program
        func reports(_ id: Int32) -> [JSON] {
            let info = program.nodes[Int(id)]
            let kids = info.children.flatMap { reports($0) }
            if info.isLiteral { return kids }
            let v = values(id)
            if visitedOnly, v.isEmpty { return [] }
            var members: [(String, JSON)] = [("sourcePosition", position(ruleset, info.range))]
            members.append(("values", .array(v)))
            if !kids.isEmpty { members.append(("children", .array(kids))) }
            return [.object(JSONObject(members))]
        }
        return program.roots.flatMap { reports($0) }
    }

    static func position(_ ruleset: Ruleset, _ r: SourceRange) -> JSON {
        .object(JSONObject([
            ("fileName", .string(ruleset.fileName)), ("line", .int(Int64(r.start.line))),
            ("column", .int(Int64(r.start.column))), ("currentOffset", .int(Int64(r.start.offset))),
            ("endOffset", .int(Int64(r.end.offset))),
        ]))
    }
}
