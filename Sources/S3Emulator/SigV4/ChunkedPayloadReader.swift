import HearthCrypto

/// What signed aws-chunked bodies chain their chunk signatures from.
struct ChunkSigningContext: Sendable {
    /// The access key (for SignatureDoesNotMatch's AWSAccessKeyId).
    let accessKey: String
    let signingKey: [UInt8]
    /// The request's X-Amz-Date.
    let amzDate: String
    /// `yyyyMMdd/region/s3/aws4_request`.
    let scope: String
    /// The request signature, which the first chunk signature chains from.
    let seedSignature: String
}

/// A push-based decoder of `Content-Encoding: aws-chunked` bodies that verifies every chunk
/// signature (and the trailer signature) as the bytes arrive.
///
/// ```
/// <hex size>;chunk-signature=<sig>\r\n <data> \r\n   … repeated …
/// 0;chunk-signature=<sig>\r\n
/// [<trailer name>:<value>\r\n … x-amz-trailer-signature:<sig>\r\n]
/// \r\n
/// ```
/// Unsigned bodies (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`) omit the `;chunk-signature=` extensions.
/// Each chunk's string to sign is
/// `AWS4-HMAC-SHA256-PAYLOAD\n<date>\n<scope>\n<previous sig>\n<sha256("")>\n<sha256(chunk)>`;
/// the trailer's is `AWS4-HMAC-SHA256-TRAILER\n<date>\n<scope>\n<last chunk sig>\n<sha256(trailer lines)>`
/// (Related: "Signature Calculations for the Authorization Header: Transferring Payload in Multiple
/// Chunks" and "…including trailing headers" in the S3 API reference).
///
/// Memory stays bounded: chunk data is passed to `emit` in the pieces it arrives in, and only one
/// header line (or the small trailer section) is ever buffered. Data is emitted before its chunk's
/// signature is checked, so a consumer must commit only after `finish()` succeeds.
final class ChunkedPayloadReader {
    private enum State {
        case header, data, dataCR, dataLF, trailer, done
    }

    /// The longest chunk header line accepted (a size, a signature and some slack for extensions).
    static let maxHeaderLine = 4096
    /// The most trailer bytes accepted.
    static let maxTrailerBytes = 16384

    private let signing: ChunkSigningContext?
    private let declaredLength: Int64?
    private var state = State.header
    private var line: [UInt8] = []
    private var remaining = 0
    private var providedSignature = ""
    private var chunkDigest: StreamingDigest?
    private var previousSignature: String
    private var decodedLength: Int64 = 0
    private var chunkStart: Int64 = 0
    private var chunkIndex = 0
    private var trailers: [(name: String, value: String)] = []
    private var trailerSignature: String?
    private var trailerBytes = 0
    private var failure: SigV4Failure?

    /// A reader; `signing` nil reads unsigned chunks. `declaredLength` (x-amz-decoded-content-length)
    /// stops a body that runs longer than declared as soon as it does.
    init(signing: ChunkSigningContext?, declaredLength: Int64?) {
        self.signing = signing
        self.declaredLength = declaredLength
        self.previousSignature = signing?.seedSignature ?? ""
        line.reserveCapacity(128)
    }

    /// Decodes `bytes`, passing chunk data to `emit` piece by piece.
    func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) throws(SigV4Failure) {
        if let failure { throw failure }
        do throws(SigV4Failure) {
            try consume(bytes, emit: emit)
        } catch {
            failure = error
            throw error
        }
    }

    /// Ends the body; returns the decoded length and the trailers (signature line excluded).
    func finish() throws(SigV4Failure) -> (decodedLength: Int64, trailers: [(name: String, value: String)]) {
        if let failure { throw failure }
        do throws(SigV4Failure) {
            switch state {
            case .done:
                break
            case .trailer:
                // Some clients end the body right after the last trailer line (or the final chunk)
                // without the closing empty line; the content is complete, so accept it.
                if !line.isEmpty {
                    if line.last == 0x0D { line.removeLast() }
                    try trailerLine()
                }
                try endTrailers()
            default:
                throw SigV4Failure.incompleteBody
            }
        } catch {
            failure = error
            throw error
        }
        return (decodedLength, trailers)
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) throws(SigV4Failure) {
        var i = 0
        let n = bytes.count
        while i < n {
            switch state {
            case .header, .trailer:
                // Collect one line; the buffer holds at most one line.
                var j = i
                while j < n, bytes[j] != 0x0A { j += 1 }
                let limit = state == .header ? Self.maxHeaderLine : Self.maxTrailerBytes
                guard line.count + (j - i) <= limit else {
                    throw state == .header ? .malformedChunkedEncoding(detail: "chunk header line too long")
                        : .malformedTrailer(detail: "trailer section too long")
                }
                line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<j]))
                if j == n { return }
                i = j + 1
                guard line.last == 0x0D else {
                    throw state == .header ? .malformedChunkedEncoding(detail: "chunk header line not terminated by CRLF")
                        : .malformedTrailer(detail: "trailer line not terminated by CRLF")
                }
                line.removeLast()
                if state == .header {
                    try headerLine()
                } else if line.isEmpty {
                    try endTrailers()
                } else {
                    try trailerLine()
                }
                line.removeAll(keepingCapacity: true)
            case .data:
                let take = min(remaining, n - i)
                let piece = UnsafeRawBufferPointer(rebasing: bytes[i..<(i + take)])
                chunkDigest?.update(piece)
                emit(piece)
                remaining -= take
                decodedLength += Int64(take)
                i += take
                if remaining == 0 { state = .dataCR }
            case .dataCR:
                guard bytes[i] == 0x0D else { throw .malformedChunkedEncoding(detail: "chunk data longer than its declared size") }
                i += 1
                state = .dataLF
            case .dataLF:
                guard bytes[i] == 0x0A else { throw .malformedChunkedEncoding(detail: "chunk data not terminated by CRLF") }
                i += 1
                try endChunk()
                state = .header
            case .done:
                // Stray line ends after the body are harmless; anything else is not.
                guard bytes[i] == 0x0D || bytes[i] == 0x0A else {
                    throw .malformedChunkedEncoding(detail: "data after the final chunk")
                }
                i += 1
            }
        }
    }

    /// `<hex size>[;chunk-signature=<sig>][;ext…]`.
    private func headerLine() throws(SigV4Failure) {
        var size = 0
        var digits = 0
        var k = 0
        while k < line.count, let v = SigV4Encoding.hexValue(line[k]) {
            guard digits < 15 else { throw .malformedChunkedEncoding(detail: "chunk size too large") }
            size = size << 4 | Int(v)
            digits += 1
            k += 1
        }
        guard digits > 0 else { throw .malformedChunkedEncoding(detail: "chunk size is not hexadecimal") }
        providedSignature = ""
        var sawSignature = false
        while k < line.count {
            guard line[k] == 0x3B else { throw .malformedChunkedEncoding(detail: "unexpected characters after the chunk size") }
            k += 1
            var end = k
            while end < line.count, line[end] != 0x3B { end += 1 }
            let ext = line[k..<end]
            let prefix = Array("chunk-signature=".utf8)
            if ext.starts(with: prefix) {
                providedSignature = String(decoding: ext.dropFirst(prefix.count), as: UTF8.self)
                sawSignature = true
            }
            k = end
        }
        if signing != nil && !sawSignature {
            throw .malformedChunkedEncoding(detail: "chunk \(chunkIndex) has no chunk-signature")
        }
        if let declaredLength, decodedLength + Int64(size) > declaredLength {
            throw .decodedLengthMismatch(declared: declaredLength, received: decodedLength + Int64(size))
        }
        chunkStart = decodedLength
        if size == 0 {
            if signing != nil {
                chunkDigest = StreamingDigest(.sha256)
                try endChunk()
            }
            state = .trailer
        } else {
            remaining = size
            chunkDigest = signing != nil ? StreamingDigest(.sha256) : nil
            state = .data
        }
    }

    private func endChunk() throws(SigV4Failure) {
        defer { chunkIndex += 1 }
        guard let signing, let digest = chunkDigest else { return }
        chunkDigest = nil
        let chunkHash = SigV4Encoding.hex(digest.finalize())
        let stringToSign = "AWS4-HMAC-SHA256-PAYLOAD\n\(signing.amzDate)\n\(signing.scope)\n\(previousSignature)\n\(SignatureVerifier.emptySHA256)\n\(chunkHash)"
        let expected = SigningKey.sign(signing.signingKey, Array(stringToSign.utf8))
        guard SignatureVerifier.matches(expected: expected, provided: providedSignature) else {
            throw .chunkSignatureDoesNotMatch(SignatureMismatch(
                accessKey: signing.accessKey, stringToSign: stringToSign, signatureProvided: providedSignature,
                canonicalRequest: nil, diagnosis: chunkDiagnosis(signing: signing, chunkHash: chunkHash)))
        }
        previousSignature = expected
    }

    /// Explains a chunk signature that does not chain.
    private func chunkDiagnosis(signing: ChunkSigningContext, chunkHash: String) -> String {
        let size = decodedLength - chunkStart
        let what = "Chunk \(chunkIndex) (decoded bytes \(chunkStart)..<\(decodedLength), \(size) bytes)"
        if chunkIndex > 0 {
            let fromSeed = "AWS4-HMAC-SHA256-PAYLOAD\n\(signing.amzDate)\n\(signing.scope)\n\(signing.seedSignature)\n\(SignatureVerifier.emptySHA256)\n\(chunkHash)"
            if SignatureVerifier.matches(expected: SigningKey.sign(signing.signingKey, Array(fromSeed.utf8)), provided: providedSignature) {
                return "\(what) is signed from the seed (request) signature instead of the previous chunk's signature: chunk signatures must chain."
            }
        }
        return "\(what) does not carry the signature of its data chained from the previous signature: the chunk was altered or re-framed after signing, or signed with another key."
    }

    /// `name:value` in the trailer section.
    private func trailerLine() throws(SigV4Failure) {
        trailerBytes += line.count + 2
        guard trailerBytes <= Self.maxTrailerBytes, trailers.count < 32 else { throw .malformedTrailer(detail: "too many trailers") }
        guard let colon = line.firstIndex(of: 0x3A) else { throw .malformedTrailer(detail: "trailer line without ':'") }
        let name = String(decoding: line[..<colon], as: UTF8.self).sigV4TrimmingSpaces.lowercased()
        let value = String(String(decoding: line[(colon + 1)...], as: UTF8.self).sigV4TrimmingSpaces)
        guard !name.isEmpty else { throw .malformedTrailer(detail: "trailer without a name") }
        if name == "x-amz-trailer-signature" {
            trailerSignature = value
        } else {
            trailers.append((name, value))
        }
    }

    /// The empty line after the trailers: verify the trailer signature of signed bodies.
    private func endTrailers() throws(SigV4Failure) {
        if let signing, !trailers.isEmpty || trailerSignature != nil {
            var canonical = ""
            for trailer in trailers { canonical += "\(trailer.name):\(trailer.value)\n" }
            let hash = SigV4Encoding.hex(Digest.sha256(Array(canonical.utf8)))
            let stringToSign = "AWS4-HMAC-SHA256-TRAILER\n\(signing.amzDate)\n\(signing.scope)\n\(previousSignature)\n\(hash)"
            let expected = SigningKey.sign(signing.signingKey, Array(stringToSign.utf8))
            let provided = trailerSignature ?? ""
            guard SignatureVerifier.matches(expected: expected, provided: provided) else {
                throw .trailerSignatureDoesNotMatch(SignatureMismatch(
                    accessKey: signing.accessKey, stringToSign: stringToSign, signatureProvided: provided, canonicalRequest: nil,
                    diagnosis: provided.isEmpty
                        ? "The signed aws-chunked body has trailers but no x-amz-trailer-signature line."
                        : "The trailer signature does not match the trailers (\(trailers.map(\.name).joined(separator: ", "))): they were altered after signing."))
            }
        }
        state = .done
    }
}
