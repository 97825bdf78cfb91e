import HearthCore

/// Field-path operations on a document's field map.
enum DocumentFields {
    /// The value at `path`, or nil when absent.
    static func value(at path: FieldPath, in fields: [ExactString: FirestoreValue]) -> FirestoreValue? {
        var current = fields
        for (i, segment) in path.segments.enumerated() {
            guard let v = current[ExactString(segment)] else { return nil }
            if i == path.segments.count - 1 { return v }
            guard case .map(let m) = v else { return nil }
            current = m
        }
        return nil
    }

    /// Sets `value` at `path`, creating (or replacing non-map) intermediate maps.
    static func set(_ value: FirestoreValue, at path: FieldPath, in fields: inout [ExactString: FirestoreValue]) {
        set(value, segments: path.segments[...], in: &fields)
    }

    private static func set(_ value: FirestoreValue, segments: ArraySlice<String>, in fields: inout [ExactString: FirestoreValue]) {
        guard let name = segments.first else { return }
        let first = ExactString(name)
        if segments.count == 1 {
            fields[first] = value
            return
        }
        var child: [ExactString: FirestoreValue]
        if case .map(let m)? = fields[first] { child = m } else { child = [:] }
        fields[first] = nil  // keep the child uniquely referenced while it changes
        set(value, segments: segments.dropFirst(), in: &child)
        fields[first] = .map(child)
    }

    /// Removes the value at `path` (parents stay, possibly empty).
    static func remove(at path: FieldPath, in fields: inout [ExactString: FirestoreValue]) {
        remove(segments: path.segments[...], in: &fields)
    }

    private static func remove(segments: ArraySlice<String>, in fields: inout [ExactString: FirestoreValue]) {
        guard let name = segments.first else { return }
        let first = ExactString(name)
        if segments.count == 1 {
            fields[first] = nil
            return
        }
        guard case .map(var child)? = fields[first] else { return }
        fields[first] = nil
        remove(segments: segments.dropFirst(), in: &child)
        fields[first] = .map(child)
    }

    /// Only the fields named by `mask` (with their parent maps).
    static func project(_ fields: [ExactString: FirestoreValue], onto mask: [FieldPath]) -> [ExactString: FirestoreValue] {
        var out: [ExactString: FirestoreValue] = [:]
        for path in mask {
            if let v = value(at: path, in: fields) { set(v, at: path, in: &out) }
        }
        return out
    }

    // MARK: Sizes (https://firebase.google.com/docs/firestore/storage-size)

    static func nameSize<S: Sequence>(_ segments: S) -> Int where S.Element == String {
        segments.reduce(16) { $0 + $1.utf8.count + 1 }
    }

    static func size(of fields: [ExactString: FirestoreValue]) -> Int {
        fields.reduce(0) { $0 + $1.key.string.utf8.count + 1 + size(of: $1.value) }
    }

    static func size(of value: FirestoreValue) -> Int {
        switch value {
        case .null, .boolean: 1
        case .integer, .double, .timestamp: 8
        case .geoPoint: 16
        case .string(let s): s.utf8.count + 1
        case .bytes(let b): b.count
        case .reference(let r):
            nameSize(r.split(separator: "/").dropFirst(5).map(String.init))
        case .array(let a): a.reduce(0) { $0 + size(of: $1) }
        case .vector(let elements): 8 * elements.count
        case .map(let m): size(of: m)
        }
    }

    /// `__.*__`: a name Firestore reserves. A first byte other than `_` cannot begin a "__" prefix:
    /// most names end there, before `count` walks the name's Characters (grapheme breaking).
    static func isReservedName(_ key: String) -> Bool {
        key.utf8.first == 0x5F && key.count >= 4 && key.hasPrefix("__") && key.hasSuffix("__")
    }

    /// A name the server writes into its answer (an aggregation's alias, `find_nearest`'s distance
    /// field) is a property name: at most 1,500 bytes and not `__.*__`, in the emulator's words
    /// ("The property.name …", `label` naming the request's field before it when there is one).
    static func checkResultName(_ name: String, label: String = "") throws(FirestoreError) {
        if name.utf8.count > FieldPath.maxBytes {
            throw .invalidArgument("The \(label)property.name is longer than \(FieldPath.maxBytes) bytes.")
        }
        if isReservedName(name) {
            throw .invalidArgument("The \(label)property.name \"\(name)\" is reserved.")
        }
    }

    /// Rejects what Firestore refuses anywhere in a written document: the names it reserves
    /// (`__.*__`), and vectors holding NaN (a filter's or query vector's may).
    static func validateWritten(_ fields: [ExactString: FirestoreValue], prefix: [String] = []) throws(FirestoreError) {
        for (name, value) in fields {
            let key = name.string
            if isReservedName(key) {
                // A map typed as anything but a vector: the emulator names the property holding it.
                if key == VectorValue.typeKey, let top = prefix.first {
                    throw .invalidArgument("Property \(top) contains an invalid nested entity.")
                }
                // Firestore's wording: quoted inside maps, bare at the top level.
                throw .invalidArgument(prefix.isEmpty ? "field name \(key) is reserved" : "field name '\(key)' is reserved.")
            }
            switch value {
            case .map(let m): try validateWritten(m, prefix: prefix + [key])
            case .vector, .array: try rejectNaNVectors(value)
            default: break
            }
        }
    }

    /// Vectors are stored without NaN ("Vector cannot contain NaN values."), also inside maps in arrays.
    private static func rejectNaNVectors(_ value: FirestoreValue) throws(FirestoreError) {
        switch value {
        case .vector(let elements):
            if elements.contains(where: \.isNaN) { throw .invalidArgument("Vector cannot contain NaN values.") }
        case .array(let elements):
            for e in elements { try rejectNaNVectors(e) }
        case .map(let members):
            for v in members.values { try rejectNaNVectors(v) }
        default:
            break
        }
    }
}
