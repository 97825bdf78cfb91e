/// A small, bounded XML parser for the request documents S3 accepts (CreateBucketConfiguration,
/// Delete, CompleteMultipartUpload).
///
/// It reads elements, character data, the predefined and numeric entities, CDATA, comments and
/// processing instructions; it rejects anything not well-formed (mismatched tags, junk after the
/// root, unknown entities) so callers can answer `MalformedXML` as S3 does. Element depth is capped
/// so hostile input cannot exhaust the stack.
struct S3XMLParser {
    /// Why a document was refused.
    struct Failure: Error, Equatable {
        let offset: Int
        let reason: String
    }

    private let b: [UInt8]
    private var i = 0
    private let maxDepth: Int

    private init(_ bytes: [UInt8], maxDepth: Int) {
        b = bytes
        self.maxDepth = maxDepth
    }

    /// Parses `bytes` into its root element.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(Failure) -> XMLElement {
        var p = S3XMLParser(bytes, maxDepth: maxDepth)
        return try p.document()
    }

    private func fail(_ reason: String) -> Failure { Failure(offset: i, reason: reason) }

    private mutating func document() throws(Failure) -> XMLElement {
        // A UTF-8 byte order mark is allowed before the declaration.
        if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
        try misc()
        guard i < b.count, b[i] == UInt8(ascii: "<") else { throw fail("expected root element") }
        let root = try element(depth: 0)
        try misc()
        guard i == b.count else { throw fail("content after root element") }
        return root
    }

    /// Skips whitespace, comments, processing instructions and a DOCTYPE-free prolog.
    private mutating func misc() throws(Failure) {
        while true {
            skipSpace()
            if starts("<?") {
                guard let end = find("?>", from: i + 2) else { throw fail("unterminated processing instruction") }
                i = end + 2
            } else if starts("<!--") {
                guard let end = find("-->", from: i + 4) else { throw fail("unterminated comment") }
                i = end + 3
            } else {
                return
            }
        }
    }

    private mutating func element(depth: Int) throws(Failure) -> XMLElement {
        guard depth < maxDepth else { throw fail("document nested too deeply") }
        i += 1  // "<"
        let qname = try name()
        var element = XMLElement(name: localName(qname))
        // Attributes are parsed for well-formedness and dropped (only xmlns appears in S3 documents).
        while true {
            let hadSpace = skipSpace()
            guard i < b.count else { throw fail("unterminated start tag") }
            if b[i] == UInt8(ascii: "/") {
                guard i + 1 < b.count, b[i + 1] == UInt8(ascii: ">") else { throw fail("expected />") }
                i += 2
                return element
            }
            if b[i] == UInt8(ascii: ">") {
                i += 1
                break
            }
            guard hadSpace else { throw fail("expected whitespace before attribute") }
            _ = try name()
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "=") else { throw fail("expected = in attribute") }
            i += 1
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") else { throw fail("expected quoted attribute value") }
            let quote = b[i]
            i += 1
            while i < b.count, b[i] != quote {
                guard b[i] != UInt8(ascii: "<") else { throw fail("< in attribute value") }
                i += 1
            }
            guard i < b.count else { throw fail("unterminated attribute value") }
            i += 1
        }
        var text: [UInt8] = []
        while true {
            guard i < b.count else { throw fail("unterminated element \(qname)") }
            let c = b[i]
            if c == UInt8(ascii: "<") {
                if starts("</") {
                    i += 2
                    let closing = try name()
                    guard closing == qname else { throw fail("mismatched closing tag \(closing) for \(qname)") }
                    skipSpace()
                    guard i < b.count, b[i] == UInt8(ascii: ">") else { throw fail("expected > in end tag") }
                    i += 1
                    element.text = String(decoding: text, as: UTF8.self)
                    return element
                } else if starts("<!--") {
                    guard let end = find("-->", from: i + 4) else { throw fail("unterminated comment") }
                    i = end + 3
                } else if starts("<![CDATA[") {
                    guard let end = find("]]>", from: i + 9) else { throw fail("unterminated CDATA") }
                    text.append(contentsOf: b[(i + 9)..<end])
                    i = end + 3
                } else if starts("<?") {
                    guard let end = find("?>", from: i + 2) else { throw fail("unterminated processing instruction") }
                    i = end + 2
                } else if starts("<!") {
                    throw fail("declarations are not allowed")
                } else {
                    element.children.append(try self.element(depth: depth + 1))
                }
            } else if c == UInt8(ascii: "&") {
                try entity(into: &text)
            } else {
                text.append(c)
                i += 1
            }
        }
    }

    private mutating func entity(into out: inout [UInt8]) throws(Failure) {
        guard let semi = find(";", from: i + 1), semi - i <= 12 else { throw fail("unterminated entity") }
        let body = String(decoding: b[(i + 1)..<semi], as: UTF8.self)
        switch body {
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "amp": out.append(UInt8(ascii: "&"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
            var scalarValue: UInt32?
            if body.hasPrefix("#x") || body.hasPrefix("#X") {
                scalarValue = UInt32(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                scalarValue = UInt32(body.dropFirst(), radix: 10)
            }
            guard let v = scalarValue, let scalar = Unicode.Scalar(v) else { throw fail("unknown entity &\(body);") }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        }
        i = semi + 1
    }

    private mutating func name() throws(Failure) -> String {
        let start = i
        while i < b.count {
            let c = b[i]
            let isNameChar = (c >= 0x80) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
                || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
            guard isNameChar else { break }
            i += 1
        }
        guard i > start else { throw fail("expected a name") }
        return String(decoding: b[start..<i], as: UTF8.self)
    }

    private func localName(_ qname: String) -> String {
        guard let colon = qname.lastIndex(of: ":") else { return qname }
        return String(qname[qname.index(after: colon)...])
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = i
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
        return i > start
    }

    private func starts(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        return s.withUTF8Buffer { p in
            for k in 0..<n where b[i + k] != p[k] { return false }
            return true
        }
    }

    private func find(_ s: StaticString, from: Int) -> Int? {
        let n = s.utf8CodeUnitCount
        return s.withUTF8Buffer { p -> Int? in
            var j = from
            while j + n <= b.count {
                var match = true
                for k in 0..<n where b[j + k] != p[k] {
                    match = false
                    break
                }
                if match { return j }
                j += 1
            }
            return nil
        }
    }
}
