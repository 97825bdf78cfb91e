/// An S3 error as the server sent it: the `<Error>` XML document's elements (Code, Message,
/// RequestId, and for signature failures CanonicalRequest, StringToSign, SignatureProvided, …)
/// and Hearth's diagnosis of what the client changed.
public struct S3ErrorResponse: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status.
    public let httpStatus: Int
    /// `<Code>`, e.g. `SignatureDoesNotMatch`, `AccessDenied`, `NoSuchKey` (for a bodiless HEAD
    /// error, derived from the status as the AWS SDKs do: `NotFound`, `Forbidden`, …).
    public let code: String
    /// `<Message>`, e.g. `Request has expired`.
    public let message: String
    /// Every child element of `<Error>` by name, in document order (first occurrence wins).
    public let fields: [(name: String, value: String)]
    /// The response headers, names lower-cased.
    public let headers: [String: String]
    /// The body as sent.
    public let rawBody: String

    /// The value of the child element `name`, e.g. `"StringToSign"`.
    public subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    /// `<RequestId>` (or the `x-amz-request-id` header).
    public var requestID: String? { self["RequestId"] ?? headers["x-amz-request-id"] }
    /// `<CanonicalRequest>` of a SignatureDoesNotMatch: diff it against your client's.
    public var canonicalRequest: String? { self["CanonicalRequest"] }
    /// `<StringToSign>` of a SignatureDoesNotMatch.
    public var stringToSign: String? { self["StringToSign"] }
    /// `<SignatureProvided>`.
    public var signatureProvided: String? { self["SignatureProvided"] }
    /// `<AWSAccessKeyId>`.
    public var accessKeyID: String? { self["AWSAccessKeyId"] }
    /// Hearth's plain-words cause (`<Diagnosis>` or the `x-hearth-diagnosis` header), e.g.
    /// "Content-Type was signed as image/jpeg but the request sent image/png".
    public var diagnosis: String? { self["Diagnosis"] ?? headers["x-hearth-diagnosis"] }

    public var description: String {
        var s = "S3 \(httpStatus) \(code)"
        if !message.isEmpty { s += ": \(message)" }
        if let diagnosis { s += " — \(diagnosis)" }
        return s
    }

    public static func == (a: S3ErrorResponse, b: S3ErrorResponse) -> Bool {
        a.httpStatus == b.httpStatus && a.code == b.code && a.message == b.message && a.rawBody == b.rawBody
            && a.fields.map(\.name) == b.fields.map(\.name) && a.fields.map(\.value) == b.fields.map(\.value)
            && a.headers == b.headers
    }

    /// Parses an S3 `<Error>` document; nil when the body is not one.
    public init?(status: Int, headers: [String: String] = [:], body: String) {
        guard let fields = S3ErrorXML.parse(body) else { return nil }
        httpStatus = status
        self.fields = fields
        self.headers = headers
        code = fields.first { $0.name == "Code" }?.value ?? S3ErrorResponse.codeForStatus(status)
        message = fields.first { $0.name == "Message" }?.value ?? ""
        rawBody = body
    }

    /// An error without a body (S3 answers HEAD errors with status and headers only).
    public init(bodilessStatus status: Int, headers: [String: String] = [:]) {
        httpStatus = status
        self.headers = headers
        code = headers["x-amz-error-code"] ?? S3ErrorResponse.codeForStatus(status)
        message = headers["x-amz-error-message"] ?? ""
        fields = []
        rawBody = ""
    }

    static func codeForStatus(_ status: Int) -> String {
        switch status {
        case 301: "PermanentRedirect"
        case 304: "NotModified"
        case 400: "BadRequest"
        case 403: "Forbidden"
        case 404: "NotFound"
        case 412: "PreconditionFailed"
        default: String(status)
        }
    }
}

/// A reader for S3's flat error XML: one root element whose children hold text.
///
/// Foundation's XMLParser needs libxml2 at run time on Linux; this document shape needs far less.
enum S3ErrorXML {
    /// The children of `<Error>` as (name, decoded text) pairs; nil when the text is not such a document.
    static func parse(_ xml: String) -> [(name: String, value: String)]? {
        var s = Substring(xml)
        skipProlog(&s)
        guard s.hasPrefix("<Error>") || s.hasPrefix("<Error ") else { return nil }
        guard let rootEnd = s.firstIndex(of: ">") else { return nil }
        s = s[s.index(after: rootEnd)...]
        var out: [(String, String)] = []
        while true {
            s = s.drop(while: \.isWhitespace)
            if s.hasPrefix("</Error>") || s.isEmpty { return out }
            guard s.first == "<", let close = s.firstIndex(of: ">") else { return out.isEmpty ? nil : out }
            var tag = s[s.index(after: s.startIndex)..<close]
            if tag.hasSuffix("/") {  // <Empty/>
                tag = tag.dropLast()
                out.append((String(tag.split(separator: " ").first ?? tag), ""))
                s = s[s.index(after: close)...]
                continue
            }
            let name = String(tag.split(separator: " ").first ?? tag)
            let contentStart = s.index(after: close)
            guard let end = s[contentStart...].range(of: "</\(name)>") else { return out.isEmpty ? nil : out }
            out.append((name, decodeEntities(s[contentStart..<end.lowerBound])))
            s = s[end.upperBound...]
        }
    }

    private static func skipProlog(_ s: inout Substring) {
        while true {
            s = s.drop(while: \.isWhitespace)
            if s.hasPrefix("<?"), let r = s.range(of: "?>") {
                s = s[r.upperBound...]
            } else if s.hasPrefix("<!--"), let r = s.range(of: "-->") {
                s = s[r.upperBound...]
            } else {
                return
            }
        }
    }

    /// Replaces the predefined entities and numeric character references; CDATA sections are kept verbatim.
    static func decodeEntities(_ text: Substring) -> String {
        if !text.contains("&") && !text.contains("<![CDATA[") { return String(text) }
        var out = ""
        var i = text.startIndex
        while i < text.endIndex {
            if text[i...].hasPrefix("<![CDATA["), let end = text[i...].range(of: "]]>") {
                out += text[text.index(i, offsetBy: 9)..<end.lowerBound]
                i = end.upperBound
                continue
            }
            if text[i] == "&", let semi = text[i...].firstIndex(of: ";"), text.distance(from: i, to: semi) <= 10 {
                let entity = text[text.index(after: i)..<semi]
                var replacement: String?
                switch entity {
                case "lt": replacement = "<"
                case "gt": replacement = ">"
                case "amp": replacement = "&"
                case "quot": replacement = "\""
                case "apos": replacement = "'"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let v = UInt32(entity.dropFirst(2), radix: 16), let u = Unicode.Scalar(v) {
                        replacement = String(Character(u))
                    } else if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()), let u = Unicode.Scalar(v) {
                        replacement = String(Character(u))
                    }
                }
                if let replacement {
                    out += replacement
                    i = text.index(after: semi)
                    continue
                }
            }
            out.append(text[i])
            i = text.index(after: i)
        }
        return out
    }
}
