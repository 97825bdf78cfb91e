/// Builds the XML documents S3 answers with, escaping text as S3 does.
///
/// S3 writes `"` inside text as `&quot;` (ETags appear as `&quot;…&quot;`) and control characters
/// as numeric references, so keys with `\r` or `\t` survive a round trip through any XML parser.
struct XMLWriter {
    private(set) var bytes: [UInt8]

    /// The S3 namespace every result document declares.
    static let s3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

    /// Starts a document with the XML declaration S3 sends.
    init() {
        bytes = []
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: #"<?xml version="1.0" encoding="UTF-8"?>"#.utf8)
        bytes.append(0x0A)
    }

    /// Opens `<name>`, with the S3 namespace when `namespace` is true.
    mutating func open(_ name: String, namespace: Bool = false) {
        bytes.append(UInt8(ascii: "<"))
        bytes.append(contentsOf: name.utf8)
        if namespace {
            bytes.append(contentsOf: #" xmlns=""#.utf8)
            bytes.append(contentsOf: XMLWriter.s3Namespace.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: ">"))
    }

    /// Opens an element whose start tag (with attributes) is given verbatim: `raw("Grantee xsi:type=…")`.
    mutating func openRaw(_ startTagContent: String) {
        bytes.append(UInt8(ascii: "<"))
        bytes.append(contentsOf: startTagContent.utf8)
        bytes.append(UInt8(ascii: ">"))
    }

    /// Closes `</name>`.
    mutating func close(_ name: String) {
        bytes.append(contentsOf: "</".utf8)
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: ">"))
    }

    /// An element with escaped text: `<name>text</name>`.
    mutating func element(_ name: String, _ text: String) {
        open(name)
        appendEscaped(text)
        close(name)
    }

    /// Escaped character data at the current position.
    mutating func text(_ text: String) {
        appendEscaped(text)
    }

    /// An element only when `text` is non-nil.
    mutating func element(_ name: String, ifPresent text: String?) {
        if let text { element(name, text) }
    }

    /// An empty element `<name/>` (optionally namespaced).
    mutating func empty(_ name: String, namespace: Bool = false) {
        bytes.append(UInt8(ascii: "<"))
        bytes.append(contentsOf: name.utf8)
        if namespace {
            bytes.append(contentsOf: #" xmlns=""#.utf8)
            bytes.append(contentsOf: XMLWriter.s3Namespace.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(contentsOf: "/>".utf8)
    }

    /// Wraps `body` in `<name>…</name>`.
    mutating func group(_ name: String, namespace: Bool = false, _ body: (inout XMLWriter) -> Void) {
        open(name, namespace: namespace)
        body(&self)
        close(name)
    }

    private mutating func appendEscaped(_ text: String) {
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&apos;".utf8)
            case 0..<0x20:
                bytes.append(contentsOf: "&#\(b);".utf8)
            default: bytes.append(b)
            }
        }
    }
}
