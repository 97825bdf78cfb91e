import HearthHTTP

/// Turns an `S3Error` into S3's XML error response: the one render function for every error.
enum S3ErrorRenderer {
    /// The error document and status; `HEAD` responses carry no body, as S3's do.
    ///
    /// A diagnosis, when there is one, is added after S3's own elements (so the document is S3's
    /// with one trailing `<Diagnosis>`) and repeated in `x-hearth-diagnosis`.
    static func response(_ error: S3Error, requestID: String, hostID: String, method: String) -> Response {
        var headers = HTTPHeaders()
        for (name, value) in error.responseHeaders { headers.add(name, value) }
        if let diagnosis = error.diagnosis { headers.add("x-hearth-diagnosis", headerSafe(diagnosis)) }
        if method == "HEAD" {
            return Response(status: error.httpStatus, headers: headers, body: .empty)
        }
        headers.set("Content-Type", "application/xml")
        return Response(status: error.httpStatus, headers: headers, body: .bytes(document(error, requestID: requestID, hostID: hostID)))
    }

    /// The XML error document.
    static func document(_ error: S3Error, requestID: String, hostID: String) -> [UInt8] {
        var xml = XMLWriter()
        xml.group("Error") { x in
            x.element("Code", error.code)
            x.element("Message", error.message)
            for (name, value) in error.details { x.element(name, value) }
            x.element("RequestId", requestID)
            x.element("HostId", hostID)
            if let diagnosis = error.diagnosis { x.element("Diagnosis", diagnosis) }
        }
        return xml.bytes
    }

    /// A header value without line breaks or non-ASCII bytes (which HTTP/1.1 headers cannot carry).
    static func headerSafe(_ text: String) -> String {
        String(decoding: text.utf8.map { b -> UInt8 in
            switch b {
            case 0x20...0x7E: b
            default: UInt8(ascii: b == 0x09 || b == 0x0A || b == 0x0D ? " " : "?")
            }
        }, as: UTF8.self)
    }
}
