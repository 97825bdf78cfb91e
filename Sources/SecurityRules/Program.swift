// The checked form of a rules file: names resolved to slots, methods and built-ins to enums,
// constants folded. The evaluator runs only this form, never the parse tree.

/// A built-in global or namespace function.
enum Builtin: String, Sendable, CaseIterable {
    // No `bool()`: the official emulator has none (`Function not found error: Name: [bool].`).
    case get, exists, getAfter, existsAfter, debug, int, float, string, path
    case mathAbs = "math.abs", mathCeil = "math.ceil", mathFloor = "math.floor", mathRound = "math.round"
    case mathSqrt = "math.sqrt", mathPow = "math.pow", mathIsInfinite = "math.isInfinite", mathIsNaN = "math.isNaN"
    case timestampDate = "timestamp.date", timestampValue = "timestamp.value"
    case durationValue = "duration.value", durationTime = "duration.time", durationAbs = "duration.abs"
    case latlngValue = "latlng.value"
    case hashingCrc32 = "hashing.crc32", hashingCrc32c = "hashing.crc32c", hashingMd5 = "hashing.md5"
    case hashingSha256 = "hashing.sha256"
    /// Cloud Storage rules' cross-service reads of Firestore documents.
    case firestoreGet = "firestore.get", firestoreExists = "firestore.exists"

    var arity: Int {
        switch self {
        case .mathPow, .durationValue, .latlngValue: 2
        case .timestampDate: 3
        case .durationTime: 4
        default: 1
        }
    }

    /// Namespaces whose members are built-ins.
    static let namespaces: Set<String> = ["math", "timestamp", "duration", "latlng", "hashing", "firestore"]
}

/// A method name the evaluator knows; which types accept it is decided at run time.
enum Method: String, Sendable, CaseIterable {
    // string
    case size, matches, lower, upper, split, trim, replace, toUtf8
    // list / set
    case hasAll, hasAny, hasOnly, join, concat, removeAll, toSet, intersection, union, difference
    // map / MapDiff
    case keys, values, get, diff, addedKeys, removedKeys, changedKeys, affectedKeys, unchangedKeys
    // timestamp / duration
    case year, month, day, hours, minutes, seconds, nanos, dayOfWeek, dayOfYear, toMillis, date, time
    // latlng / bytes / path
    case latitude, longitude, distance, toBase64, toHexString, bind

    var arity: Int {
        switch self {
        case .matches, .split, .hasAll, .hasAny, .hasOnly, .join, .concat, .removeAll, .intersection, .union,
             .difference, .diff, .distance, .bind:
            1
        case .replace, .get: 2
        default: 0
        }
    }
}

/// A field of `request` resolved at compile time, so `request.auth` costs no map lookup.
enum RequestField: String, Sendable, CaseIterable {
    case auth, method, path, time, resource, query
}

/// Type names usable after `is`.
enum TypeName: String, Sendable, CaseIterable {
    case bool, int, float, number, string, list, map, timestamp, duration, path, latlng, bytes, set, vector
    case mapDiff = "map_diff", constraint
}

/// A piece of a checked path-literal segment.
enum CheckedPathPart: Sendable {
    case text(String)
    case expr(Node)
}

/// A checked expression. The first payload is the node id (index into `Program.nodes`).
indirect enum Node: Sendable {
    case constant(Int32, RulesValue)
    case list(Int32, [Node])
    case map(Int32, [(Node, Node)])
    case path(Int32, [[CheckedPathPart]])
    case local(Int32, Int)
    case pathVariable(Int32, Int)
    /// `request` (nil field: the whole map) or `request.<field>`.
    case request(Int32, RequestField?)
    case resource(Int32)
    case unknownVariable(Int32, String)
    case member(Int32, Node, String)
    case index(Int32, Node, Node)
    case slice(Int32, Node, Node?, Node?)
    case method(Int32, Node, Method, [Node])
    case unknownMethod(Int32, Node, String)
    /// A call the file loads with a warning that fails with this message when evaluated (a user
    /// function given the wrong number of arguments); the node is the call's stand-in receiver.
    case failingCall(Int32, Node, String)
    /// `s.matches('constant')`, compiled once at check time.
    case matchesConstant(Int32, Node, CompiledRegex)
    case builtin(Int32, Builtin, [Node])
    case call(Int32, Int, [Node])
    case not(Int32, Node)
    case negate(Int32, Node)
    case binary(Int32, BinaryOperator, Node, Node)
    case and(Int32, Node, Node)
    case or(Int32, Node, Node)
    case ternary(Int32, Node, Node, Node)
    case isType(Int32, Node, TypeName)

    var id: Int32 {
        switch self {
        case .constant(let i, _), .list(let i, _), .map(let i, _), .path(let i, _), .local(let i, _),
             .pathVariable(let i, _), .request(let i, _), .resource(let i), .unknownVariable(let i, _),
             .member(let i, _, _), .index(let i, _, _), .slice(let i, _, _, _), .method(let i, _, _, _),
             .unknownMethod(let i, _, _), .failingCall(let i, _, _), .matchesConstant(let i, _, _), .builtin(let i, _, _), .call(let i, _, _), .not(let i, _),
             .negate(let i, _), .binary(let i, _, _, _), .and(let i, _, _), .or(let i, _, _),
             .ternary(let i, _, _, _), .isType(let i, _, _):
            return i
        }
    }
}

/// What the program knows about each expression node (for traces and coverage).
struct NodeInfo: Sendable {
    var range: SourceRange
    var children: [Int32]
    /// Literals are left out of coverage reports, as the Rules API does.
    var isLiteral: Bool
}

/// The methods an allow statement covers, as a bit set.
struct MethodSet: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    static let get = MethodSet(rawValue: 1), list = MethodSet(rawValue: 2), create = MethodSet(rawValue: 4)
    static let update = MethodSet(rawValue: 8), delete = MethodSet(rawValue: 16)
    static let read: MethodSet = [.get, .list]
    static let write: MethodSet = [.create, .update, .delete]

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init(_ m: RulesMethod) {
        switch m {
        case .get: self = .get
        case .list: self = .list
        case .create: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }

    static func named(_ name: String) -> MethodSet? {
        switch name {
        case "read": .read
        case "write": .write
        case "get": .get
        case "list": .list
        case "create": .create
        case "update": .update
        case "delete": .delete
        default: nil
        }
    }
}

struct CheckedAllow: Sendable {
    var index: Int
    var methods: MethodSet
    var methodNames: [String]
    var condition: Node?
    var range: SourceRange
}

/// A class, so a matched block is shared by reference rather than copied with its arrays.
final class CheckedMatch: Sendable {
    let segments: [MatchSegmentKind]
    /// Index of this block's first path variable in the bindings array.
    let firstVariable: Int
    let variableNames: [String]
    let allows: [CheckedAllow]
    let children: [CheckedMatch]
    let range: SourceRange
    /// This block's own path text (`/users/{uid}`).
    let pathText: String
    /// The full pattern from the service root, for traces.
    let pattern: String
    /// Every path variable in scope here (outer blocks first), in binding order.
    let allVariableNames: [String]
    /// When no block from the root to this one has a recursive wildcard, every variable in scope
    /// (`allVariableNames`' order) is one segment at a fixed place of the path: its index there.
    /// A match then binds nothing: a variable is read from the request's path when evaluated.
    /// nil below a recursive wildcard.
    let positions: [Int32]?
    /// Per allow, its methods and its condition's node id (−1: none), for the evaluator's loop.
    let allowPlan: [(methods: MethodSet, condition: Int32)]

    init(segments: [MatchSegmentKind], firstVariable: Int, variableNames: [String], allows: [CheckedAllow],
         children: [CheckedMatch], range: SourceRange, pathText: String, pattern: String, allVariableNames: [String],
         positions: [Int32]? = nil) {
        self.segments = segments
        self.firstVariable = firstVariable
        self.variableNames = variableNames
        self.allows = allows
        self.children = children
        self.range = range
        self.pathText = pathText
        self.pattern = pattern
        self.allVariableNames = allVariableNames
        self.positions = positions
        allowPlan = allows.map { ($0.methods, $0.condition?.id ?? -1) }
        assert(positions == nil || positions?.count == allVariableNames.count, "a position for every variable in scope")
    }

    /// Whether this block and every block below it have `positions`.
    var positionalTree: Bool { positions != nil && children.allSatisfy(\.positionalTree) }
}

struct CheckedFunction: Sendable {
    var name: String
    var parameterCount: Int
    var localCount: Int
    var lets: [Node]
    var body: Node
    var range: SourceRange
}

/// The source of a file with fast access to lines and ranges.
struct SourceText: Sendable {
    let bytes: [UInt8]
    /// Offsets where each line starts.
    let lineStarts: [Int]

    init(_ source: String) {
        bytes = Array(source.utf8)
        var starts = [0]
        for (i, b) in bytes.enumerated() where b == 0x0A { starts.append(i + 1) }
        lineStarts = starts
    }

    /// Line `n` (1-based) without its terminator.
    func line(_ n: Int) -> String {
        guard n >= 1, n <= lineStarts.count else { return "" }
        let start = lineStarts[n - 1]
        var end = n < lineStarts.count ? lineStarts[n] - 1 : bytes.count
        if end > start, bytes[end - 1] == 0x0D { end -= 1 }
        return String(decoding: bytes[start..<max(start, end)], as: UTF8.self)
    }

    /// The text of a range, whitespace runs collapsed to one space, shortened past `limit` characters.
    func snippet(_ r: SourceRange, limit: Int = 120) -> String {
        let lo = max(0, min(r.start.offset, bytes.count)), hi = max(lo, min(r.end.offset, bytes.count))
        var out = ""
        var space = false
        for ch in String(decoding: bytes[lo..<hi], as: UTF8.self) {
            if ch.isWhitespace {
                space = true
                continue
            }
            if space, !out.isEmpty { out.append(" ") }
            space = false
            out.append(ch)
        }
        if out.count > limit { out = String(out.prefix(limit)) + "…" }
        return out
    }
}

/// A compiled rules file.
final class Program: Sendable {
    let text: SourceText
    let version: Int
    let matches: [CheckedMatch]
    let functions: [CheckedFunction]
    let nodes: [NodeInfo]
    let allowCount: Int
    /// Root expressions for coverage: allow conditions, lets and function bodies, in source order.
    let roots: [Int32]

    /// What the evaluator runs.
    let code: Code
    /// Whether no match block has a recursive wildcard: every block has `positions`, and matching
    /// a request binds nothing (`Evaluation.matchPositional`).
    let positionalMatching: Bool

    init(text: SourceText, version: Int, matches: [CheckedMatch], functions: [CheckedFunction], nodes: [NodeInfo], allowCount: Int, roots: [Int32]) {
        self.text = text
        self.version = version
        self.matches = matches
        self.functions = functions
        self.nodes = nodes
        self.allowCount = allowCount
        self.roots = roots
        var trees: [Node] = []
        func conditions(_ blocks: [CheckedMatch]) {
            for b in blocks {
                trees.append(contentsOf: b.allows.compactMap(\.condition))
                conditions(b.children)
            }
        }
        conditions(matches)
        positionalMatching = matches.allSatisfy(\.positionalTree)
        code = Code(nodeCount: nodes.count, roots: trees, functions: functions)
    }
}
