import Foundation

/// A `multipart/related` upload body (the JSON metadata part, then the media part), read as it
/// streams in: the metadata part and both parts' headers are buffered up to `maxHeadBytes`, the
/// media part is handed on in slices of the input, so an upload of any size costs the head plus
/// less than one delimiter of held bytes.
///
/// Related: "Perform a multipart upload" in the Cloud Storage JSON API docs (RFC 2387 framing over
/// the multipart syntax of RFC 2046 §5.1).
struct MultipartRelated {
    /// The metadata part's body (JSON); known once the media part has begun.
    private(set) var metadata: [UInt8] = []
    /// The media part's `Content-Type`, when it names one.
    private(set) var mediaContentType: String?
    /// Whether the delimiter that ends the media part arrived.
    private(set) var isComplete = false

    private enum Phase { case head, media, trailer }

    private static let cr: UInt8 = 0x0D

    private var phase = Phase.head
    /// `CRLF--boundary`: the media part ends where it begins.
    private let delimiter: [UInt8]
    private let maxHeadBytes: Int
    /// The body up to the media part's data, until it can be split.
    private var head: [UInt8] = []
    /// Media bytes that may start the delimiter, held until the next feed decides.
    private var held: [UInt8] = []

    init(boundary: String, maxHeadBytes: Int = 1 << 20) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        self.maxHeadBytes = maxHeadBytes
    }

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

    /// Reads the next piece of the body; `media` receives the media part's bytes in order.
    mutating func feed(_ input: UnsafeRawBufferPointer, media: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch phase {
        case .trailer: return
        case .media: try scanMedia(input, media)
        case .head:
            head.append(contentsOf: input)
            guard let start = try splitHead() else {
                if head.count > maxHeadBytes {
                    throw StorageError.invalid("Invalid multipart request: the metadata part and the part headers exceed \(maxHeadBytes) bytes.")
                }
                return
            }
            phase = .media
            let rest = Array(head[start...])
            head = []
            try rest.withUnsafeBytes { try scanMedia($0, media) }
        }
    }

    /// Called when the body is over.
    func finish() throws(StorageError) {
        switch phase {
        case .trailer: return
        case .head: throw .invalid("Invalid multipart request: expected a metadata part and a media part.")
        case .media: throw .invalid("Invalid multipart request: the body ended before the media part's closing boundary.")
        }
    }

    // MARK: Head

    /// Parses the buffered head; returns where the media data starts in it, nil when more is needed.
    private mutating func splitHead() throws(StorageError) -> Int? {
        // The first boundary line needs no CRLF before it; after a preamble it has one.
        let open = Array(delimiter.dropFirst(2))
        let first: Int
        if head.starts(with: open) {
            first = 0
        } else if let p = Self.find(delimiter, in: head, from: 0) {
            first = p + 2
        } else {
            return nil
        }
        guard let metaHeadersEnd = Self.find([13, 10, 13, 10], in: head, from: first + open.count) else { return nil }
        let metaStart = metaHeadersEnd + 4
        guard let metaEnd = Self.find(delimiter, in: head, from: metaHeadersEnd + 2) else { return nil }
        let afterDelimiter = metaEnd + delimiter.count
        guard head.count >= afterDelimiter + 2 else { return nil }
        if head[afterDelimiter] == 0x2D, head[afterDelimiter + 1] == 0x2D {
            throw .invalid("Invalid multipart request: expected a metadata part and a media part.")
        }
        guard let mediaHeadersEnd = Self.find([13, 10, 13, 10], in: head, from: afterDelimiter) else { return nil }
        metadata = metaStart <= metaEnd ? Array(head[metaStart..<metaEnd]) : []
        let headers = String(decoding: head[afterDelimiter..<mediaHeadersEnd], as: UTF8.self)
        for line in headers.split(separator: "\r\n") {
            let kv = line.split(separator: ":", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-type" {
                mediaContentType = kv[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return mediaHeadersEnd + 4
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, from >= 0, hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        let first = needle[0]
        var i = from
        while i <= hay.count - needle.count {
            if hay[i] == first, hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    // MARK: Media

    /// Hands on media bytes up to the delimiter, holding a possible delimiter prefix at the end.
    private mutating func scanMedia(_ input: UnsafeRawBufferPointer, _ media: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !input.isEmpty else { return }
        if !held.isEmpty {
            // The held bytes and the first delimiter-length of input decide whether a delimiter starts among them.
            let probe = held + input.prefix(delimiter.count)
            for j in 0..<held.count {
                let n = min(probe.count - j, delimiter.count)
                guard probe[j..<(j + n)].elementsEqual(delimiter[0..<n]) else { continue }
                try probe.withUnsafeBytes { try media(UnsafeRawBufferPointer(rebasing: $0[0..<j])) }
                if n == delimiter.count {
                    held = []
                    phase = .trailer
                    isComplete = true
                } else {
                    held = Array(probe[j...])  // the input ran out inside a possible delimiter
                }
                return
            }
            try held.withUnsafeBytes { try media($0) }
            held = []
        }
        guard let base = input.baseAddress else { return }
        var k = 0
        while k < input.count, let hit = memchr(base + k, Int32(Self.cr), input.count - k) {
            let at = base.distance(to: UnsafeRawPointer(hit))
            let available = min(input.count - at, delimiter.count)
            if delimiter.withUnsafeBytes({ memcmp(base + at, $0.baseAddress!, available) }) == 0 {
                try media(UnsafeRawBufferPointer(rebasing: input[0..<at]))
                if available == delimiter.count {
                    phase = .trailer
                    isComplete = true
                } else {
                    held = Array(input[at...])
                }
                return
            }
            k = at + 1
        }
        try media(input)
    }
}
