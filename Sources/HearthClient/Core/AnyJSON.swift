/// A small JSON value for request bodies.
indirect enum AnyJSON: Encodable, Sendable {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case array([AnyJSON])
    case object([String: AnyJSON])
    /// A Firestore `Value` in its REST form.
    case value(FirestoreValue)

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .value(let v): try c.encode(v)
        case .string(let s): try c.encode(s)
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
