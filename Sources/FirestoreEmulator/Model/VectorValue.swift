import HearthCore

/// Firestore's vector value on the wire: the map `{"__type__": "__vector__", "value": [doubles]}`
/// that the SDKs send for `Vector` / `FieldValue.vector(…)` and read back as one. Every decoder
/// turns such a map into `FirestoreValue.vector` here, and every encoder writes that map again.
///
/// The checks and their wording are the official emulator's (docs/firestore.md, *Vector values*):
/// they apply wherever a value is read (documents, filters, cursors, query vectors), except that
/// NaN elements are refused only in written documents (`DocumentFields.validateWritten`).
enum VectorValue {
    static let typeKey = "__type__"
    static let typeName = "__vector__"
    static let valueKey = "value"
    /// "Must be a vector of no more than 2048 dimensions" (`FindNearest.query_vector`), and stored
    /// vectors alike.
    static let maxDimensions = 2048

    /// The map a vector is on the wire (and to encoders that write maps).
    static func members(_ elements: [Double]) -> [ExactString: FirestoreValue] {
        [ExactString(typeKey): .string(typeName), ExactString(valueKey): .array(elements.map(FirestoreValue.double))]
    }

    /// The vector a decoded map stands for; nil for any other map (a `__type__` naming another
    /// type stays a map, which a written document then refuses).
    static func recognize(_ members: [ExactString: FirestoreValue]) throws(FirestoreError) -> FirestoreValue? {
        guard let type = members[ExactString(typeKey)] else { return nil }
        guard case .string(let name) = type else { throw .invalidArgument("Field __type__ is not a string.") }
        guard name == typeName else { return nil }
        guard let value = members[ExactString(valueKey)] else { throw .invalidArgument("Vector map is missing key 'value'.") }
        guard members.count == 2 else { throw .invalidArgument("Vector Value map has extraneous entries.") }
        guard case .array(let elements) = value else { throw .invalidArgument("Vector Value type must be an array.") }
        guard !elements.isEmpty else { throw .invalidArgument("Cannot have a zero length vector.") }
        guard elements.count <= maxDimensions else {
            throw .invalidArgument("Vectors must be at most \(maxDimensions) dimensions.")
        }
        var doubles: [Double] = []
        doubles.reserveCapacity(elements.count)
        for e in elements {
            // Integers too are refused: the SDKs always send doubles.
            guard case .double(let d) = e else { throw .invalidArgument("Vector must only contain values of type 'double'") }
            doubles.append(d)
        }
        return .vector(doubles)
    }

    /// A decoded map value, or the vector it stands for; a vector directly inside an array is
    /// refused, as arrays inside arrays are.
    static func mapOrVector(_ members: [ExactString: FirestoreValue], inArray: Bool) throws(FirestoreError) -> FirestoreValue {
        guard let vector = try recognize(members) else { return .map(members) }
        if inArray { throw .invalidArgument("Cannot convert a vector value in an array value.") }
        return vector
    }
}
