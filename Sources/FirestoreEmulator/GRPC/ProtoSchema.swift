/// The shape of one protobuf message as Hearth reads it: field number → proto3 JSON name and type.
///
/// Requests are decoded through these tables into the proto3 JSON tree the REST parsers already
/// read (`ProtoObject`), so both transports share one validation path and one set of error messages.
struct ProtoSchema: Sendable {
    /// The fully qualified message name (`google.firestore.v1.Write`).
    let name: String
    let fields: [Int: Field]

    init(_ name: String, _ fields: [Field]) {
        self.name = name
        var byNumber: [Int: Field] = [:]
        for f in fields { byNumber[f.number] = f }
        self.fields = byNumber
    }

    /// One field.
    struct Field: Sendable {
        let number: Int
        /// The lowerCamelCase JSON name.
        let json: String
        let kind: Kind
        let repeated: Bool
        /// The oneof the field belongs to: setting it clears the others (last one on the wire wins).
        let oneof: String?

        init(_ number: Int, _ json: String, _ kind: Kind, repeated: Bool = false, oneof: String? = nil) {
            self.number = number
            self.json = json
            self.kind = kind
            self.repeated = repeated
            self.oneof = oneof
        }
    }

    /// A field's type and its proto3 JSON form.
    enum Kind: Sendable {
        case string
        /// base64 text.
        case bytes
        case bool
        /// JSON number.
        case int32
        /// Decimal string (proto3 JSON writes 64-bit integers as strings).
        case int64
        /// JSON number, or "NaN" / "Infinity" / "-Infinity".
        case double
        /// The value's name; an unknown number stays a number (proto3 open enums).
        case enumeration([Int64: String])
        /// A nested message, by full name.
        case message(String)
        /// `google.protobuf.Timestamp` → RFC 3339 text.
        case timestamp
        /// `google.protobuf.Int32Value` → number.
        case int32Value
        /// `google.protobuf.Int64Value` → decimal string.
        case int64Value
        /// `google.protobuf.DoubleValue` → number.
        case doubleValue
        /// `google.protobuf.NullValue` → JSON null.
        case nullValue
        /// `map<string, string>`.
        case stringMap
        /// `map<string, google.firestore.v1.Value>`.
        case valueMap
    }
}
