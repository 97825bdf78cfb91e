import Foundation

/// A streaming, bounded reader of `multipart/form-data` bodies: RFC 7578 over the multipart
/// syntax of RFC 2046 §5.1, fed the body in whatever pieces it arrives in.
///
/// Memory stays bounded whatever the body size: part data is handed on as slices of the input
/// (only a possible delimiter prefix, shorter than the delimiter, is held between feeds) and a
/// part's header block is buffered up to `maxHeaderBytes`.
///
/// It exists because libmicrohttpd's `MHD_PostProcessor` (0.9.75) mis-parses forms real clients
/// send; docs/s3.md ("Form parsing") lists what was measured.
struct MultipartFormReader {
    /// One part's header fields, as far as form-data uses them.
    struct Part: Sendable, Equatable {
        /// The `name` parameter of `Content-Disposition: form-data`.
        var name: String
        /// The `filename` parameter (or a decoded `filename*`), when present.
        var filename: String?
        /// The part's `Content-Type`, when present.
        var contentType: String?
    }

    /// What the reader found, in body order.
    enum Event {
        /// A part's headers; its data follows. `dataOffset` is the body offset of its first byte.
        case partBegin(Part, dataOffset: Int64)
        /// Bytes of the current part (valid only during the callback).
        case partData(UnsafeRawBufferPointer)
        /// The current part ended: a delimiter followed its data.
        case partEnd
        /// The close delimiter: the form is complete; what follows is epilogue and is ignored.
        case end
    }

    /// Why a body is not well-formed multipart/form-data (in plain words, for the diagnosis).
    struct Malformed: Error, Equatable, Sendable {
        let reason: String
    }

    private enum State: Equatable {
        /// Before the first delimiter: discarded (RFC 2046 lets a preamble precede it).
        case preamble
        /// Inside a part's data, looking for the next delimiter.
        case data
        /// Just after a delimiter: `--` closes the form, optional padding and CRLF start a part.
        case afterDelimiter(AfterDelimiter)
        /// Reading a part's header block up to its empty line.
        case headers
        /// After the close delimiter.
        case epilogue
    }

    private enum AfterDelimiter: Equatable { case start, dash, padding, cr }

    private static let cr: UInt8 = 0x0D
    private static let lf: UInt8 = 0x0A

    /// `CRLF--boundary`: a delimiter is always preceded by the CRLF that ends the previous line.
    private let delimiter: [UInt8]
    private let maxHeaderBytes: Int
    private var state = State.preamble
    /// Bytes that may begin a delimiter, held until the next feed decides. It starts as a virtual
    /// CRLF so a body that opens with `--boundary` matches like any other delimiter.
    private var pending: [UInt8] = [cr, lf]
    private var header: [UInt8] = []
    /// Body bytes consumed by earlier feeds.
    private var consumed: Int64 = 0
    /// Whether the close delimiter was seen.
    private(set) var isComplete = false

    /// A reader for parts separated by `boundary` (the parameter's value, without the dashes).
    init(boundary: [UInt8], maxHeaderBytes: Int = 16 << 10) {
        delimiter = [MultipartFormReader.cr, MultipartFormReader.lf, 0x2D, 0x2D] + boundary
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Body bytes fed so far.
    var position: Int64 { consumed }

    /// Reads the next piece of the body, reporting what it completes to `handle`.
    mutating func feed(_ input: UnsafeRawBufferPointer, _ handle: (Event) -> Void) throws(Malformed) {
        var i = 0
        let n = input.count
        while i < n {
            switch state {
            case .epilogue:
                i = n
            case .preamble, .data:
                i = scan(input, from: i, handle)
            case .afterDelimiter(let step):
                i = try afterDelimiter(step, input, at: i, handle)
            case .headers:
                i = try headers(input, from: i, handle)
            }
        }
        consumed += Int64(n)
    }

    /// Called when the body is over: throws unless the close delimiter arrived.
    func finish() throws(Malformed) {
        switch state {
        case .epilogue: return
        case .preamble: throw Malformed(reason: "the body has no boundary line (--boundary from the Content-Type header)")
        case .data: throw Malformed(reason: "the body ended inside a part, before its closing boundary line")
        case .headers: throw Malformed(reason: "the body ended inside a part's headers")
        case .afterDelimiter: throw Malformed(reason: "the body ended right after a boundary line")
        }
    }

    // MARK: Delimiter search

    /// Scans part data (or the preamble) for the delimiter; returns where reading continues.
    private mutating func scan(_ input: UnsafeRawBufferPointer, from start: Int, _ handle: (Event) -> Void) -> Int {
        let emitting = state == .data
        var from = start
        if !pending.isEmpty {
            // The held bytes plus the first delimiter-length of input decide whether they start a delimiter.
            let take = min(input.count - start, delimiter.count)
            let head = pending + UnsafeRawBufferPointer(rebasing: input[start..<(start + take)])
            var j = 0
            while j < pending.count {
                let length = min(head.count - j, delimiter.count)
                if head[j..<(j + length)].elementsEqual(delimiter[0..<length]) { break }
                j += 1
            }
            if j < pending.count {
                if emitting { emit(head[0..<j], handle) }
                if head.count - j >= delimiter.count {
                    let used = j + delimiter.count - pending.count
                    pending = []
                    foundDelimiter(handle)
                    return start + used
                }
                // The input ran out inside a possible delimiter: hold it all.
                pending = Array(head[j...])
                return input.count
            }
            if emitting { emit(pending[...], handle) }
            pending = []
            from = start
        }
        guard let base = input.baseAddress else { return input.count }
        var k = from
        while k < input.count, let hit = memchr(base + k, Int32(MultipartFormReader.cr), input.count - k) {
            let at = base.distance(to: UnsafeRawPointer(hit))
            let available = min(input.count - at, delimiter.count)
            let matches = delimiter.withUnsafeBytes { d in memcmp(base + at, d.baseAddress!, available) == 0 }
            if matches {
                if emitting && at > from { handle(.partData(UnsafeRawBufferPointer(rebasing: input[from..<at]))) }
                if available == delimiter.count {
                    foundDelimiter(handle)
                    return at + delimiter.count
                }
                pending = Array(UnsafeRawBufferPointer(rebasing: input[at...]))
                return input.count
            }
            k = at + 1
        }
        if emitting && input.count > from { handle(.partData(UnsafeRawBufferPointer(rebasing: input[from...]))) }
        return input.count
    }

    private func emit(_ bytes: ArraySlice<UInt8>, _ handle: (Event) -> Void) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { handle(.partData($0)) }
    }

    private mutating func foundDelimiter(_ handle: (Event) -> Void) {
        if state == .data { handle(.partEnd) }
        state = .afterDelimiter(.start)
    }

    // MARK: After a delimiter

    private mutating func afterDelimiter(_ step: AfterDelimiter, _ input: UnsafeRawBufferPointer, at i: Int,
                                         _ handle: (Event) -> Void) throws(Malformed) -> Int {
        let b = input[i]
        let isPadding = b == 0x20 || b == 0x09
        switch step {
        case .start:
            if b == 0x2D {
                state = .afterDelimiter(.dash)
            } else if isPadding {
                state = .afterDelimiter(.padding)
            } else if b == MultipartFormReader.cr {
                state = .afterDelimiter(.cr)
            } else {
                throw Malformed(reason: "a boundary line is followed by other characters (the boundary must not appear inside a part)")
            }
        case .dash:
            guard b == 0x2D else { throw Malformed(reason: "a boundary line ends in a single '-'") }
            isComplete = true
            state = .epilogue
            handle(.end)
        case .padding:
            if b == MultipartFormReader.cr {
                state = .afterDelimiter(.cr)
            } else if !isPadding {
                throw Malformed(reason: "a boundary line is followed by other characters (the boundary must not appear inside a part)")
            }
        case .cr:
            guard b == MultipartFormReader.lf else { throw Malformed(reason: "a boundary line does not end in CRLF") }
            header.removeAll(keepingCapacity: true)
            state = .headers
        }
        return i + 1
    }

    // MARK: Part headers

    private mutating func headers(_ input: UnsafeRawBufferPointer, from start: Int, _ handle: (Event) -> Void) throws(Malformed) -> Int {
        var i = start
        while i < input.count {
            header.append(input[i])
            i += 1
            let count = header.count
            let emptyBlock = count == 2 && header[0] == MultipartFormReader.cr && header[1] == MultipartFormReader.lf
            let blockEnd = count >= 4 && header[count - 4] == MultipartFormReader.cr && header[count - 3] == MultipartFormReader.lf
                && header[count - 2] == MultipartFormReader.cr && header[count - 1] == MultipartFormReader.lf
            if emptyBlock || blockEnd {
                let part = try MultipartFormReader.parsePart(emptyBlock ? [] : Array(header[0..<(count - 4)]))
                header.removeAll(keepingCapacity: true)
                state = .data
                handle(.partBegin(part, dataOffset: consumed + Int64(i)))
                return i
            }
            if count > maxHeaderBytes { throw Malformed(reason: "a part's headers are longer than \(maxHeaderBytes) bytes") }
        }
        return i
    }

    /// Parses a part's header block (without the empty line that ends it).
    static func parsePart(_ block: [UInt8]) throws(Malformed) -> Part {
        var rawLines: [ArraySlice<UInt8>] = []
        var lineStart = 0
        var k = 0
        while k + 1 < block.count {
            if block[k] == cr, block[k + 1] == lf {
                rawLines.append(block[lineStart..<k])
                k += 2
                lineStart = k
            } else {
                k += 1
            }
        }
        rawLines.append(block[lineStart...])
        var lines: [String] = []
        for line in rawLines {
            let text = String(decoding: line, as: UTF8.self)
            if let first = line.first, first == 0x20 || first == 0x09, !lines.isEmpty {
                // An obsolete folded line continues the previous field.
                lines[lines.count - 1] += " " + text.trimmingCharacters(in: .whitespaces)
            } else {
                lines.append(text)
            }
        }
        var disposition: (type: String, parameters: [(String, String)])?
        var contentType: String?
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(reason: "a part header line has no ':' (\(line.prefix(60)))") }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            switch name {
            case "content-disposition":
                guard disposition == nil else { continue }
                guard let parsed = HeaderParameters.parse(value) else {
                    throw Malformed(reason: "a part's Content-Disposition cannot be parsed (\(value.prefix(80)))")
                }
                disposition = parsed
            case "content-type":
                if contentType == nil { contentType = value }
            default:
                continue
            }
        }
        guard let disposition else { throw Malformed(reason: "a part has no Content-Disposition header") }
        guard disposition.type.lowercased() == "form-data" else {
            throw Malformed(reason: "a part's Content-Disposition is '\(disposition.type)', not form-data")
        }
        func parameter(_ name: String) -> String? { disposition.parameters.first { $0.0 == name }?.1 }
        guard let fieldName = parameter("name") else { throw Malformed(reason: "a part's Content-Disposition has no name parameter") }
        // RFC 6266 prefers the extended filename*; RFC 7578 clients send filename.
        let filename = parameter("filename*").flatMap(HeaderParameters.decodeExtendedValue) ?? parameter("filename")
        return Part(name: fieldName, filename: filename, contentType: contentType)
    }
}
