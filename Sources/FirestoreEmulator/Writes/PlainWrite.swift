import HearthCore

/// What the direct write decoders share (`WriteProtoDecoder` for gRPC, `WriteJSONDecoder` for
/// REST): a write read from its wire form without the general parser's intermediate trees, then
/// checked by the general parser's own functions.
///
/// A direct decoder accepts only what the general path (`WriteParser`) accepts and builds the same
/// `Write` from it; anything else — invalid, unusual or merely rare — throws `Fallback`, and the
/// caller runs the general path, which reports errors with Firestore's messages.
enum PlainWrite {
    /// Not a plain form, or invalid: the general path decides.
    struct Fallback: Error {}

    /// Runs one of the general parser's checks; its error means the general path reports it.
    static func checked<T>(_ body: () throws(FirestoreError) -> T) throws(Fallback) -> T {
        do { return try body() } catch { throw Fallback() }
    }

    /// The write made of its decoded parts: an update (`name`, `fields`) or a delete (`delete`),
    /// with the names, mask paths and transforms checked as `WriteParser.parseWrite` checks them.
    static func make(database: DatabaseID, update: (name: String, fields: [ExactString: FirestoreValue])?, delete: String?,
                     mask: [String]?, transforms: [FieldTransform], precondition: Precondition?) throws(Fallback) -> Write {
        try checked { () throws(FirestoreError) in
            let named: DatabaseID
            let path: ResourcePath
            let operation: Write.Operation
            if let update {
                try DocumentFields.validateWritten(update.fields)
                (named, path) = try ResourcePath.parseAnyDocumentName(update.name)
                var paths: [FieldPath]?
                if let mask {
                    var parsed: [FieldPath] = []
                    for text in mask { parsed.append(try QueryParser.fieldPath(text)) }
                    paths = try WriteParser.validateMask(parsed)
                }
                operation = .update(fields: update.fields, mask: paths)
            } else if let delete, mask == nil, transforms.isEmpty {
                (named, path) = try ResourcePath.parseAnyDocumentName(delete)
                operation = .delete
            } else {
                throw .invalidArgument("not a plain write")
            }
            try WriteParser.checkTransforms(transforms)
            return Write(path: path, operation: operation, transforms: transforms, precondition: precondition,
                         database: named == database ? nil : named)
        }
    }

    /// A field transform on the field `path` names.
    static func transform(_ path: String, _ kind: FieldTransform.Kind) throws(Fallback) -> FieldTransform {
        FieldTransform(field: try checked { () throws(FirestoreError) in try QueryParser.fieldPath(path) }, kind: kind)
    }

    /// A string value within Firestore's limit.
    static func string(_ s: String) throws(Fallback) -> FirestoreValue {
        guard s.utf8.count <= ValueJSON.maxValueBytes else { throw Fallback() }
        return .string(s)
    }

    /// A bytes value within Firestore's limit.
    static func bytes(_ b: [UInt8]) throws(Fallback) -> FirestoreValue {
        guard b.count <= ValueJSON.maxValueBytes else { throw Fallback() }
        return .bytes(b)
    }

    /// A geo point within Firestore's ranges.
    static func geoPoint(_ lat: Double, _ lng: Double) throws(Fallback) -> FirestoreValue {
        guard lat >= -90, lat <= 90, lng >= -180, lng <= 180 else { throw Fallback() }
        return .geoPoint(latitude: lat, longitude: lng)
    }

    /// A map value, or the vector it stands for (`VectorValue`); a bad vector is the general path's to report.
    static func mapOrVector(_ members: [ExactString: FirestoreValue], inArray: Bool) throws(Fallback) -> FirestoreValue {
        // Most maps have no `__type__`: they skip the vector checks.
        guard members[ExactString(VectorValue.typeKey)] != nil else { return .map(members) }
        return try checked { () throws(FirestoreError) in try VectorValue.mapOrVector(members, inArray: inArray) }
    }

    /// A field name a `fields` map may hold, under a field path of `prefix` bytes (its dot
    /// included; 0 at the top): the path's bytes, which Firestore bounds as a whole.
    static func checkKey(_ key: String, prefix: Int) throws(Fallback) -> Int {
        let bytes = prefix + key.utf8.count
        guard !key.isEmpty, bytes <= FieldPath.maxBytes else { throw Fallback() }
        return bytes
    }
}
