import HearthCore

/// A request's JSON object body with typed member access that fails with the member's name.
struct JSONBody {
    let object: JSONObject

    /// Parses `bytes`; an empty body counts as `{}` so that a missing member is reported by name.
    init(_ bytes: [UInt8]) throws(UploadsError) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = JSONObject()
            return
        }
        let value: JSON
        do { value = try JSON.parse(bytes, maxDepth: 32) } catch { throw .invalidJSON(error.description) }
        guard let o = value.objectValue else { throw .invalidJSON("expected a JSON object, got \(value.typeName)") }
        object = o
    }

    /// A required non-empty string member.
    func requiredString(_ name: String) throws(UploadsError) -> String {
        guard let s = try optionalString(name) else { throw .missingField(name) }
        return s
    }

    /// A string member, nil when absent or null; an empty string counts as absent.
    func optionalString(_ name: String) throws(UploadsError) -> String? {
        guard let v = object[name], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw .wrongType(field: name, expected: "a string", got: v.typeName) }
        return s.isEmpty ? nil : s
    }

    /// An integer member, nil when absent or null; integral doubles (`900.0`) are accepted as JSON allows.
    func optionalInt(_ name: String) throws(UploadsError) -> Int64? {
        guard let v = object[name], !v.isNull else { return nil }
        switch v {
        case .int(let i): return i
        case .double(let d):
            guard let i = v.intValue else {
                // Never infinite: `JSON.parse` refuses a number past a double's range.
                throw .wrongType(field: name, expected: "an integer", got: "\(d)")
            }
            return i
        default:
            throw .wrongType(field: name, expected: "an integer", got: v.typeName)
        }
    }
}
