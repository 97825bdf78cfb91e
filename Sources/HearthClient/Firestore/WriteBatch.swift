/// Writes committed together, all or nothing (`documents:commit`), each judged by the rules with the
/// whole batch visible to `getAfter()`.
public struct WriteBatch: Sendable {
    /// `projects/{p}/databases/{d}`.
    public let databaseRoot: String
    var writes: [AnyJSON] = []

    /// An empty batch for the database `databaseRoot`.
    public init(databaseRoot: String) { self.databaseRoot = databaseRoot }

    /// The number of writes.
    public var count: Int { writes.count }

    private var encoder: FirestoreEncoder { FirestoreEncoder(databaseRoot: databaseRoot) }

    private func name(_ path: String) throws(HearthClientError) -> String {
        "\(databaseRoot)/documents/\(try DocumentReference(path).path)"
    }

    private func encode<T: Encodable>(_ value: T) throws(HearthClientError) -> EncodedDocument {
        do { return try encoder.encodeDocument(value) } catch { throw .invalidArgument("cannot encode \(T.self) as a document: \(error)") }
    }

    /// Writes the whole document (replacing it), or with `merge` only the fields `value` names.
    public mutating func set<T: Encodable>(_ value: T, at path: String, merge: Bool = false) throws(HearthClientError) {
        let doc = try encode(value)
        if !merge && !doc.deletes.isEmpty {
            throw .invalidArgument("FieldValue.delete is only allowed in update and in set with merge")
        }
        let mask = merge ? doc.leafPaths + doc.deletes : nil
        writes.append(Self.updateWrite(name: try name(path), fields: doc.fields, mask: mask, transforms: doc.transforms, exists: nil))
    }

    /// Creates the document; the commit fails with ALREADY_EXISTS if it exists.
    public mutating func create<T: Encodable>(_ value: T, at path: String) throws(HearthClientError) {
        let doc = try encode(value)
        guard doc.deletes.isEmpty else { throw .invalidArgument("FieldValue.delete cannot be used when creating a document") }
        writes.append(Self.updateWrite(name: try name(path), fields: doc.fields, mask: nil, transforms: doc.transforms, exists: false))
    }

    /// Updates the fields `value` encodes (top-level keys are field paths, dotted keys reach into
    /// maps as `updateData` does); the document must exist.
    public mutating func update<T: Encodable>(_ value: T, at path: String) throws(HearthClientError) {
        let doc = try encode(value)
        var fields: [String: FirestoreValue] = [:]
        var mask: [FieldPath] = []
        for key in doc.fields.keys.sorted() {
            guard let v = doc.fields[key] else { continue }
            let fp = FieldPath(dotted: key)
            try Self.insert(v, at: fp.segments[...], into: &fields)
            mask.append(fp)
        }
        // Sentinels were recorded under their top-level key; re-split that key as a dotted path.
        func resplit(_ p: FieldPath) -> FieldPath {
            guard let first = p.segments.first else { return p }
            return FieldPath(FieldPath(dotted: first).segments + p.segments.dropFirst())
        }
        let transforms = doc.transforms.map { FieldTransform(fieldPath: resplit($0.fieldPath), value: $0.value) }
        mask += doc.deletes.map(resplit)
        writes.append(Self.updateWrite(name: try name(path), fields: fields, mask: mask, transforms: transforms, exists: true))
    }

    /// `update` with heterogeneous values: `["status": "ready", "size": 12, "updatedAt": FieldValue.serverTimestamp]`.
    public mutating func update(at path: String, fields: [String: any Encodable & Sendable]) throws(HearthClientError) {
        try update(EncodableDictionary(fields), at: path)
    }

    /// Deletes the document (a no-op when it does not exist, unless `mustExist`).
    public mutating func delete(at path: String, mustExist: Bool = false) throws(HearthClientError) {
        var w: [String: AnyJSON] = ["delete": .string(try name(path))]
        if mustExist { w["currentDocument"] = .object(["exists": .bool(true)]) }
        writes.append(.object(w))
    }

    static func insert(_ value: FirestoreValue, at path: ArraySlice<String>, into fields: inout [String: FirestoreValue]) throws(HearthClientError) {
        guard let head = path.first else { return }
        if path.count == 1 {
            fields[head] = value
            return
        }
        var inner = fields[head]?.mapValue ?? [:]
        if let existing = fields[head], existing.mapValue == nil {
            throw .invalidArgument("field path \(path.joined(separator: ".")) conflicts with a value at \(head)")
        }
        try insert(value, at: path.dropFirst(), into: &inner)
        fields[head] = .map(inner)
    }

    static func updateWrite(name: String, fields: [String: FirestoreValue], mask: [FieldPath]?, transforms: [FieldTransform],
                            exists: Bool?) -> AnyJSON {
        var w: [String: AnyJSON] = ["update": .object(["name": .string(name), "fields": .object(fields.mapValues(AnyJSON.value))])]
        if let mask { w["updateMask"] = .object(["fieldPaths": .array(mask.map { .string($0.escaped) })]) }
        if !transforms.isEmpty { w["updateTransforms"] = .array(transforms.compactMap(transformJSON)) }
        if let exists { w["currentDocument"] = .object(["exists": .bool(exists)]) }
        return .object(w)
    }

    static func transformJSON(_ t: FieldTransform) -> AnyJSON? {
        guard let (member, argument) = t.value.transform else { return nil }
        let value: AnyJSON
        switch argument {
        case .serverValue(let s): value = .string(s)
        case .value(let v): value = .value(v)
        case .values(let vs): value = .object(["values": .array(vs.map(AnyJSON.value))])
        }
        return .object(["fieldPath": .string(t.fieldPath.escaped), member: value])
    }
}

/// Encodes a `[String: any Encodable]` as a map.
struct EncodableDictionary: Encodable {
    let values: [String: any Encodable & Sendable]
    init(_ values: [String: any Encodable & Sendable]) { self.values = values }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: IndexKey.self)
        for key in values.keys.sorted() {
            guard let v = values[key] else { continue }
            try c.encode(v, forKey: IndexKey(stringValue: key))
        }
    }
}
