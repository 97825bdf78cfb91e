/// Decides whether a client may presign an upload for a Content-Type.
struct ContentTypePolicy: Sendable {
    /// Allowed media types, lower-cased, without parameters.
    let allowed: Set<String>
    /// The allowlist as configured, for error messages.
    let listed: [String]

    init(_ types: [String]) {
        listed = types
        allowed = Set(types.map { ContentTypePolicy.essence(of: $0) })
    }

    /// `Image/JPEG; charset=x` → `image/jpeg`.
    static func essence(of value: String) -> String {
        let head = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return head.trimmingSpaces().lowercased()
    }

    /// Returns the value to sign (trimmed) when it is an allowed, well-formed media type.
    func check(_ raw: String) throws(UploadsError) -> String {
        let value = Substring(raw).trimmingSpaces()
        // A header value with control characters cannot be sent as the client's Content-Type.
        guard !value.isEmpty, value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
            throw .contentTypeNotAllowed(raw, allowed: listed)
        }
        let essence = ContentTypePolicy.essence(of: value)
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }), allowed.contains(essence) else {
            throw .contentTypeNotAllowed(raw, allowed: listed)
        }
        return value
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
