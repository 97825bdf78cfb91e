import HearthCore

/// Parses `Write`, `Precondition` and `FieldTransform` JSON.
struct WriteParser {
    let database: DatabaseID

    static let writeFields: Set<String> = ["update", "delete", "transform", "updateMask", "updateTransforms", "currentDocument"]

    func parseWrite(_ o: ProtoObject) throws(FirestoreError) -> Write {
        try o.requireKnown(Self.writeFields)
        let kinds = ["update", "delete", "transform"].filter { o.raw($0) != nil }
        guard kinds.count == 1 else {
            throw .invalidArgument(kinds.isEmpty ? "empty write operation"
                                                 : "Invalid JSON payload received. Oneof field 'operation' is already set. Cannot set '\(kinds[1])' at '\(o.path)'.")
        }
        var transforms: [FieldTransform] = []
        if let items = try o.array("updateTransforms") {
            for (i, item) in items.enumerated() {
                transforms.append(try parseTransform(try ProtoObject(json: item, path: o.childPath("updateTransforms") + "[\(i)]")))
            }
        }
        let precondition = try o.object("currentDocument").flatMap { p throws(FirestoreError) in try parsePrecondition(p) }

        var path: ResourcePath
        var named = database
        let operation: Write.Operation
        if let update = try o.object("update") {
            let (db, p, fields) = try parseNamedDocument(update, requireName: true)
            path = p
            if let db { named = db }
            var mask: [FieldPath]?
            if let m = try o.object("updateMask") {
                mask = try parseMask(m)
            }
            operation = .update(fields: fields, mask: mask)
        } else if let name = try o.string("delete") {
            if o.raw("updateMask") != nil || !transforms.isEmpty {
                throw .invalidArgument(transforms.isEmpty ? "a delete must not specify an update mask."
                                                          : "a delete must not specify a update transform.")
            }
            (named, path) = try ResourcePath.parseAnyDocumentName(name)
            operation = .delete
        } else if let t = try o.object("transform") {
            try t.requireKnown(["document", "fieldTransforms"])
            guard let name = try t.string("document") else {
                throw .invalidArgument("A transform write must name its document at '\(t.path)'.")
            }
            (named, path) = try ResourcePath.parseAnyDocumentName(name)
            for (i, item) in (try t.array("fieldTransforms") ?? []).enumerated() {
                transforms.append(try parseTransform(try ProtoObject(json: item, path: t.childPath("fieldTransforms") + "[\(i)]")))
            }
            if o.raw("updateMask") != nil {
                throw .invalidArgument("A transform write cannot have an update mask.")
            }
            operation = .transform
        } else {
            throw .invalidArgument("A write must set one of update, delete or transform.")
        }
        try Self.checkTransforms(transforms)
        return Write(path: path, operation: operation, transforms: transforms, precondition: precondition,
                     database: named == database ? nil : named)
    }

    /// Transforms of one field apply in order (Firestore accepts them); a field and a field
    /// inside it may not both be transformed, nor `__name__`.
    static func checkTransforms(_ transforms: [FieldTransform]) throws(FirestoreError) {
        for (i, t) in transforms.enumerated() {
            if t.field.isDocumentKey {
                throw .invalidArgument("Cannot transform the field __name__.")
            }
            try t.field.rejectReservedNames(as: .write)
            for u in transforms[..<i] where u.field != t.field && (u.field.isPrefix(of: t.field) || t.field.isPrefix(of: u.field)) {
                let parent = u.field.isPrefix(of: t.field) ? u.field : t.field
                throw .invalidArgument("Cannot transform property \(parent.canonical) and its nested property at the same time.")
            }
        }
    }

    /// A `Document` in a write or request body: its path (when named) and validated fields.
    func parseDocument(_ o: ProtoObject, requireName: Bool) throws(FirestoreError) -> (ResourcePath, [ExactString: FirestoreValue]) {
        // The name's database is the write's own concern (see `parseWrite`).
        let (_, path, fields) = try parseNamedDocument(o, requireName: requireName)
        return (path, fields)
    }

    /// `parseDocument` with the database its name names (nil when it has no name), the name parsed once.
    private func parseNamedDocument(_ o: ProtoObject, requireName: Bool) throws(FirestoreError)
        -> (DatabaseID?, ResourcePath, [ExactString: FirestoreValue]) {
        try o.requireKnown(["name", "fields", "createTime", "updateTime"])
        let fields = try ValueJSON.decodeFields(o.raw("fields"), path: o.childPath("fields"))
        try DocumentFields.validateWritten(fields)
        guard let name = try o.string("name"), !name.isEmpty else {
            if requireName { throw .invalidArgument("Document name must be set at '\(o.childPath("name"))'.") }
            return (nil, ResourcePath.root, fields)
        }
        let (db, path) = try ResourcePath.parseAnyDocumentName(name)
        return (db, path, fields)
    }

    func parseMask(_ o: ProtoObject) throws(FirestoreError) -> [FieldPath] {
        try o.requireKnown(["fieldPaths"])
        var out: [FieldPath] = []
        for item in try o.array("fieldPaths") ?? [] {
            guard case .string(let s) = item else {
                throw .invalidArgument("Invalid value at '\(o.childPath("fieldPaths"))' (TYPE_STRING), \(item.serialized())")
            }
            out.append(try QueryParser.fieldPath(s))
        }
        return try Self.validateMask(out)
    }

    /// Rejects masks naming a reserved name (`__.*__`) inside a path. A lone `__name__` names no
    /// field a document can hold, so it selects (or, in an update mask, writes) nothing, as the
    /// official emulator answers in read and update masks alike. A path given twice, or with a
    /// path inside it, is accepted as Firestore accepts it (the mask is a set of paths).
    static func validateMask(_ paths: [FieldPath]) throws(FirestoreError) -> [FieldPath] {
        for p in paths {
            try p.rejectReservedNames(as: .write)
        }
        return paths
    }

    func parsePrecondition(_ o: ProtoObject) throws(FirestoreError) -> Precondition? {
        try o.requireKnown(["exists", "updateTime"])
        let exists = try o.bool("exists")
        var updateTime: Instant?
        if let s = try o.string("updateTime") {
            guard let t = ValueJSON.parseTimestamp(s) else {
                throw .invalidArgument("Invalid value at '\(o.childPath("updateTime"))' (type.googleapis.com/google.protobuf.Timestamp), Field 'updateTime', Invalid time format: \(s)")
            }
            updateTime = t
        }
        if exists != nil && updateTime != nil {
            throw .invalidArgument("Invalid JSON payload received. Oneof field 'condition_type' is already set.")
        }
        if exists == nil && updateTime == nil { return nil }
        return Precondition(exists: exists, updateTime: updateTime)
    }

    func parseTransform(_ o: ProtoObject) throws(FirestoreError) -> FieldTransform {
        let kinds = ["setToServerValue", "increment", "maximum", "minimum", "appendMissingElements", "removeAllFromArray"]
        try o.requireKnown(Set(kinds + ["fieldPath"]))
        guard let pathText = try o.string("fieldPath") else {
            throw .invalidArgument("A field transform must set fieldPath at '\(o.path)'.")
        }
        let field = try QueryParser.fieldPath(pathText)
        let set = kinds.filter { o.raw($0) != nil }
        guard set.count == 1 else {
            throw .invalidArgument(set.isEmpty ? "Operation type must be specified for field transformation."
                                               : "Invalid JSON payload received. Oneof field 'transform_type' is already set. Cannot set '\(set[1])' at '\(o.path)'.")
        }
        func number(_ name: String) throws(FirestoreError) -> FirestoreValue {
            // Force-unwrap safe: `name` is the member found above.
            let v = try ValueJSON.decode(o.raw(name)!, path: o.childPath(name))
            guard v.isNumber else { throw .invalidArgument("Input must be int64 or double.") }
            return v
        }
        func elements(_ name: String) throws(FirestoreError) -> [FirestoreValue] {
            let a = try ProtoObject(json: o.raw(name)!, path: o.childPath(name))
            try a.requireKnown(["values"])
            var out: [FirestoreValue] = []
            for (i, item) in (try a.array("values") ?? []).enumerated() {
                out.append(try ValueJSON.decode(item, path: a.childPath("values") + "[\(i)]", depth: 1, inArray: true))
            }
            return out
        }
        switch set[0] {
        case "setToServerValue":
            let v = try o.enumeration("setToServerValue", [0: "SERVER_VALUE_UNSPECIFIED", 1: "REQUEST_TIME"])
            if v == "SERVER_VALUE_UNSPECIFIED" {
                throw .invalidArgument("ServerValue type must be specified for set_to_server_value transformation.")
            }
            guard v == "REQUEST_TIME" else { throw .invalidArgument("setToServerValue must be REQUEST_TIME at '\(o.path)'.") }
            return FieldTransform(field: field, kind: .serverTime)
        case "increment": return FieldTransform(field: field, kind: .increment(try number("increment")))
        case "maximum": return FieldTransform(field: field, kind: .maximum(try number("maximum")))
        case "minimum": return FieldTransform(field: field, kind: .minimum(try number("minimum")))
        case "appendMissingElements": return FieldTransform(field: field, kind: .appendMissingElements(try elements("appendMissingElements")))
        default: return FieldTransform(field: field, kind: .removeAllFromArray(try elements("removeAllFromArray")))
        }
    }
}
