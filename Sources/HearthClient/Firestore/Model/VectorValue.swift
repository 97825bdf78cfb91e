/// A vector embedding (`FieldValue.vector` in the Firebase SDKs): doubles that Firestore stores as a
/// value of its own, ordered after arrays and before maps, which `findNearest` queries rank by.
///
/// On the REST wire it is the map `{"__type__": "__vector__", "value": [doubles]}`; `FirestoreValue`
/// reads that map back as `.vector`, as the SDKs read it as a `VectorValue`.
public struct VectorValue: Sendable, Hashable, Codable {
    public let array: [Double]

    public init(_ array: [Double]) {
        self.array = array
    }

    /// The reserved map key and its value that mark a map as a vector.
    static let typeKey = "__type__"
    static let typeName = "__vector__"
    static let valueKey = "value"

    /// The vector a wire map holds, if it is one: exactly the two keys, every element a number.
    static func from(map fields: [String: FirestoreValue]) -> VectorValue? {
        guard fields.count == 2, case .string(typeName)? = fields[typeKey],
              case .array(let items)? = fields[valueKey] else { return nil }
        var doubles: [Double] = []
        doubles.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .double(let d): doubles.append(d)
            case .integer(let i): doubles.append(Double(i))
            default: return nil
            }
        }
        return VectorValue(doubles)
    }

    /// The wire map of this vector.
    var wireFields: [String: FirestoreValue] {
        [Self.typeKey: .string(Self.typeName), Self.valueKey: .array(array.map { .double($0) })]
    }
}
