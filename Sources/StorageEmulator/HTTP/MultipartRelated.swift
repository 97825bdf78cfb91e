import Foundation

/// A `multipart/related` upload body: the JSON metadata part and the media part.
///
/// Related: "Perform a multipart upload" in the Cloud Storage JSON API docs (RFC 2387 framing).
struct MultipartRelated {
    var metadata: [UInt8]
    var mediaContentType: String?
    var media: ArraySlice<UInt8>

    /// The boundary parameter of a `multipart/related; boundary=…` Content-Type, unquoted.
    static func boundary(contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let kind = parts.first, kind.lowercased() == "multipart/related" else { return nil }
        for p in parts.dropFirst() where p.lowercased().hasPrefix("boundary=") {
            var b = String(p.dropFirst("boundary=".count))
            if b.hasPrefix("\""), b.hasSuffix("\""), b.count >= 2 { b = String(b.dropFirst().dropLast()) }
            return b.isEmpty ? nil : b
        }
        return nil
    }

    /// Splits `body` at `--boundary` lines; exactly two parts are expected.
    static func parse(_ body: [UInt8], boundary: String) throws(StorageError) -> MultipartRelated {
        let delimiter = Array("--\(boundary)".utf8)
        var positions: [Int] = []
        var i = 0
        while let p = find(delimiter, in: body, from: i) {
            positions.append(p)
            i = p + delimiter.count
        }
        guard positions.count >= 3 else { throw .invalid("Invalid multipart request: expected a metadata part and a media part.") }
        func part(_ k: Int) throws(StorageError) -> (headers: String, body: ArraySlice<UInt8>) {
            var start = positions[k] + delimiter.count
            if body[start...].starts(with: [13, 10]) { start += 2 }
            var end = positions[k + 1]
            // The CRLF before the next delimiter belongs to the delimiter.
            if end >= 2, body[end - 2] == 13, body[end - 1] == 10 { end -= 2 }
            guard start <= end, let split = find([13, 10, 13, 10], in: body, from: start), split <= end else {
                throw .invalid("Invalid multipart request: a part has no header section.")
            }
            return (String(decoding: body[start..<split], as: UTF8.self), body[(split + 4)..<max(split + 4, end)])
        }
        let meta = try part(0)
        let media = try part(1)
        var contentType: String?
        for line in media.headers.split(separator: "\r\n") {
            let kv = line.split(separator: ":", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-type" {
                contentType = kv[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return MultipartRelated(metadata: Array(meta.body), mediaContentType: contentType, media: media.body)
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        let first = needle[0]
        var i = from
        while i <= hay.count - needle.count {
            if hay[i] == first, hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
