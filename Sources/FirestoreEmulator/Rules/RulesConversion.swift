import HearthCore
import SecurityRules

/// Turns Firestore documents, tokens and times into the rules language's values.
enum RulesConversion {
    /// A stored value as rules see it (references become paths from `databases/…`).
    static func value(_ v: FirestoreValue) -> RulesValue {
        switch v {
        case .null: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .double(let d): return .float(d)
        case .timestamp(let t): return time(t)
        case .string(let s): return .string(s)
        case .bytes(let b): return .bytes(b)
        case .reference(let name):
            // projects/p/databases/d/documents/… → databases/d/documents/…
            return .path(Array(name.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)))
        case .geoPoint(let lat, let lng): return .latlng(latitude: lat, longitude: lng)
        case .array(let a): return .list(a.map(value))
        // Not the map it is on the wire: the emulator's rules see a `vector` of their own.
        case .vector(let elements): return .vector(elements)
        case .map(let m): return .map(map(m))
        }
    }

    /// A map value's or a document's fields as a rules map (Dictionary keys are distinct).
    static func map(_ fields: [ExactString: FirestoreValue]) -> RulesMap {
        var entries: [RulesMap.Element] = []
        entries.reserveCapacity(fields.count)
        for (k, v) in fields { entries.append((key: k.string, value: value(v))) }
        return RulesMap(uniqueEntries: entries)
    }

    static func time(_ t: Instant) -> RulesValue {
        .timestamp(seconds: t.unixSeconds, nanos: t.nanos)
    }

    /// `databases/{db}/documents/…` segments of a path.
    static func path(_ database: DatabaseID, _ path: ResourcePath) -> [String] {
        ["databases", database.database, "documents"] + path.segments
    }

    /// A `resource` map: `data`, `id`, `__name__`.
    static func resource(_ database: DatabaseID, path: ResourcePath, fields: [ExactString: FirestoreValue]) -> RulesValue {
        // Written in key order, so the map only checks it.
        .map(RulesMap(uniqueEntries: [
            (key: "__name__", value: .path(self.path(database, path))),
            (key: "data", value: .map(map(fields))),
            (key: "id", value: .string(path.lastSegment)),
        ]))
    }

    /// `request.auth` from verified claims: `{uid, token}`.
    static func auth(uid: String, claims: JSONObject) -> RulesValue {
        .map(["uid": .string(uid), "token": json(.object(claims))])
    }

    static func json(_ j: JSON) -> RulesValue {
        switch j {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .float(d)
        case .string(let s): return .string(s)
        case .array(let a): return .list(a.map(json))
        case .object(let o):
            return .map(RulesMap(o.map { ($0.0, json($0.1)) }))
        }
    }

    /// The document path a rules path names in `database`, or nil.
    static func documentPath(_ segments: [String], in database: DatabaseID) -> ResourcePath? {
        guard segments.count >= 5, segments.count % 2 == 1, segments[0] == "databases", segments[2] == "documents",
              segments[1] == database.database || segments[1] == "(default)" && database.database == "(default)"
        else { return nil }
        return ResourcePath(Array(segments.dropFirst(3)))
    }
}
