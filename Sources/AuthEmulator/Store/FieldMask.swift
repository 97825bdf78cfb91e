import Foundation
import HearthCore

/// Google field masks over JSON objects (`updateMask=displayName,mfaConfig.state`).
enum FieldMask {
    /// The paths of a mask, each split at dots, names converted to camelCase.
    static func paths(_ mask: String) -> [[String]] {
        mask.split(separator: ",").compactMap { path in
            let fields = path.trimmingCharacters(in: .whitespaces).split(separator: ".").map { RequestBody.camelCase(String($0)) }
            return fields.isEmpty ? nil : fields
        }
    }

    /// The value at `path`, nil when absent or null.
    static func value(at path: [String], in json: JSON) -> JSON? {
        var current = json
        for f in path {
            guard let next = current[f], !next.isNull else { return nil }
            current = next
        }
        return current
    }

    /// `object` with the value at `path` set (nil removes it), creating objects on the way.
    static func setting(_ value: JSON?, at path: ArraySlice<String>, in object: JSONObject) -> JSONObject {
        var o = object
        guard let first = path.first else { return o }
        if path.count == 1 {
            o[first] = value
        } else {
            let child = o[first]?.objectValue ?? JSONObject()
            o[first] = .object(setting(value, at: path.dropFirst(), in: child))
        }
        return o
    }

    /// `document` with the members named in `paths` (dotted) replaced by their values in
    /// `update`, a path whose value is absent or null clearing one; paths outside `members` are
    /// ignored.
    static func applying(_ update: JSONObject, paths: [[String]], to document: JSONObject, members: [String]) -> JSONObject {
        var next = document
        for path in paths {
            guard let first = path.first, members.contains(first) else { continue }
            next = setting(value(at: path, in: .object(update)), at: path[...], in: next)
        }
        return next
    }

    /// A resource's JSON: its `name` first, then its members.
    static func resource(name: String, _ document: JSONObject) -> JSON {
        var o = JSONObject([("name", .string(name))])
        for (k, v) in document { o[k] = v }
        return .object(o)
    }
}
