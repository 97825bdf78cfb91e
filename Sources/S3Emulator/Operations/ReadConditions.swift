import HearthCore

/// The conditional-request and Range rules of GetObject / HeadObject (RFC 9110 §13.2.2 order,
/// which is what S3 documents).
enum ReadConditions {
    /// What the conditions decided.
    enum Outcome: Equatable {
        case proceed
        case notModified
        case preconditionFailed(String)
    }

    /// Evaluates `If-Match`, `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since`.
    ///
    /// If-Match wins over If-Unmodified-Since and If-None-Match over If-Modified-Since (so "If-Match
    /// true, If-Unmodified-Since false" is 200 and "If-None-Match false, If-Modified-Since true" is
    /// 304, as the S3 documentation spells out). Unparseable dates are ignored.
    static func evaluate(ifMatch: String?, ifUnmodifiedSince: String?, ifNoneMatch: String?, ifModifiedSince: String?,
                         etag: String, lastModified: Instant) -> Outcome {
        let modifiedSeconds = lastModified.unixSeconds
        if let im = ifMatch {
            if !ETag.matches(im, etag) { return .preconditionFailed("If-Match") }
        } else if let ius = ifUnmodifiedSince.flatMap(HTTPDate.parse), modifiedSeconds > ius.unixSeconds {
            return .preconditionFailed("If-Unmodified-Since")
        }
        if let inm = ifNoneMatch {
            if ETag.matches(inm, etag) { return .notModified }
        } else if let ims = ifModifiedSince.flatMap(HTTPDate.parse), modifiedSeconds <= ims.unixSeconds {
            return .notModified
        }
        return .proceed
    }

    /// A byte range request.
    enum RangeOutcome: Equatable {
        /// No usable Range header: the whole object.
        case whole
        /// Bytes `start...end` (inclusive), clamped to the object.
        case partial(start: Int64, end: Int64)
        /// Syntactically valid but outside the object: 416.
        case unsatisfiable
    }

    /// Interprets a `Range` header against an object of `size` bytes.
    ///
    /// S3 serves one range; a header it cannot use (several ranges, another unit, bad syntax) is
    /// ignored and the whole object is returned, as RFC 9110 allows.
    static func range(_ header: String?, size: Int64) -> RangeOutcome {
        guard let header else { return .whole }
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = h.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ s: String) -> Int64? {
            guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(s) ?? Int64.max  // absurdly large positions are simply past the end
        }
        if first.isEmpty {
            guard let n = number(last) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .partial(start: max(0, size - n), end: size - 1)
        }
        guard let start = number(first) else { return .whole }
        if last.isEmpty {
            return start < size ? .partial(start: start, end: size - 1) : .unsatisfiable
        }
        guard let end = number(last), end >= start else { return .whole }
        return start < size ? .partial(start: start, end: min(end, size - 1)) : .unsatisfiable
    }
}
