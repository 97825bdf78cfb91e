/// What the request's Content-Type says about a form upload.
enum FormContentType: Equatable {
    /// `multipart/form-data` with its boundary (the parameter value, without the leading dashes).
    case formData(boundary: [UInt8])
    /// Any other media type (or none): S3 answers 412.
    case notFormData
    /// `multipart/form-data` without a usable boundary parameter.
    case missingBoundary

    /// Reads a Content-Type header value.
    ///
    /// RFC 2046 limits a boundary to 70 characters of a small set; real clients stay inside it,
    /// and Hearth accepts any printable ASCII up to 200 so that a client's quirk is not a failure.
    static func parse(_ value: String?) -> FormContentType {
        guard let value, let parsed = HeaderParameters.parse(value) else { return value == nil ? .notFormData : .missingBoundary }
        guard parsed.type.lowercased() == "multipart/form-data" else { return .notFormData }
        guard let boundary = parsed.parameters.first(where: { $0.0 == "boundary" })?.1 else { return .missingBoundary }
        let bytes = Array(boundary.utf8)
        guard !bytes.isEmpty, bytes.count <= 200, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), bytes.last != 0x20 else {
            return .missingBoundary
        }
        return .formData(boundary: bytes)
    }
}
