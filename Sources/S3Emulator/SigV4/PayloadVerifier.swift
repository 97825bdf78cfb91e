import HearthCrypto

/// The body facts established once a payload verified.
struct VerifiedPayload: Sendable {
    /// The decoded body length (what was emitted).
    let length: Int64
    /// Checksums computed over the decoded body and verified against the request (base64), for
    /// s3store to store and return with `x-amz-checksum-mode: ENABLED`.
    let checksums: [ChecksumAlgorithm: String]
    /// The aws-chunked trailers, as sent (trailer signature excluded).
    let trailers: [(name: String, value: String)]
}

/// Verifies a request body in any payload mode while it streams through.
///
/// s3store feeds the raw body (after HTTP de-chunking) to `feed`, stores what `emit` receives (the
/// decoded object bytes), and commits only when `finish()` returns: every check that needs the whole
/// body (SHA-256, chunk and trailer signatures, decoded length, checksums) fails there or earlier.
/// Once a call throws, every later call throws the same failure.
final class PayloadVerifier {
    private let mode: PayloadMode
    private let reader: ChunkedPayloadReader?
    private var sha256: StreamingDigest?
    private var checksums: [ChecksumAlgorithm: RunningChecksum] = [:]
    private let declaredTrailer: ChecksumAlgorithm?
    private let headerChecksum: DeclaredChecksum?
    private var length: Int64 = 0
    private var failure: SigV4Failure?

    /// A verifier for `request`'s body.
    init(_ request: AuthenticatedRequest) {
        mode = request.payload
        declaredTrailer = request.declaredTrailer
        headerChecksum = request.headerChecksum
        switch request.payload {
        case .unsigned:
            reader = nil
        case .sha256:
            reader = nil
            sha256 = StreamingDigest(.sha256)
        case .streaming(let signed, _, let decodedLength):
            reader = ChunkedPayloadReader(signing: signed ? request.chunkSigning : nil, declaredLength: decodedLength)
        }
        if let declaredTrailer { checksums[declaredTrailer] = RunningChecksum(declaredTrailer) }
        if let headerChecksum, checksums[headerChecksum.algorithm] == nil {
            checksums[headerChecksum.algorithm] = RunningChecksum(headerChecksum.algorithm)
        }
    }

    /// Verifies the next raw body bytes and passes the decoded bytes to `emit`.
    func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) throws(SigV4Failure) {
        if let failure { throw failure }
        if let reader {
            do throws(SigV4Failure) {
                try reader.feed(bytes) { piece in
                    self.take(piece)
                    emit(piece)
                }
            } catch {
                failure = error
                throw error
            }
        } else {
            sha256?.update(bytes)
            take(bytes)
            emit(bytes)
        }
    }

    @inline(__always)
    private func take(_ piece: UnsafeRawBufferPointer) {
        length += Int64(piece.count)
        for checksum in checksums.values { checksum.update(piece) }
    }

    /// Ends the body; throws the failure S3 would answer with, or returns what was verified.
    func finish() throws(SigV4Failure) -> VerifiedPayload {
        if let failure { throw failure }
        do throws(SigV4Failure) {
            return try verify()
        } catch {
            failure = error
            throw error
        }
    }

    private func verify() throws(SigV4Failure) -> VerifiedPayload {
        var trailers: [(name: String, value: String)] = []
        switch mode {
        case .unsigned:
            break
        case .sha256(let expected):
            let computed = SigV4Encoding.hex(sha256?.finalize() ?? [])
            sha256 = nil
            if computed != expected { throw .contentSHA256Mismatch(clientComputed: expected, computed: computed) }
        case .streaming(_, _, let declared):
            guard let reader else { break }
            let result = try reader.finish()
            trailers = result.trailers
            if result.decodedLength != declared { throw .decodedLengthMismatch(declared: declared, received: result.decodedLength) }
        }
        // Most requests declare no checksum: `mapValues` of the empty dictionary allocated a new one.
        let computed = checksums.isEmpty ? [:] : checksums.mapValues { $0.finalizeBase64() }
        checksums = [:]
        // Trailers: the declared checksum must arrive, well formed and matching; no other.
        for trailer in trailers {
            guard let algorithm = ChecksumAlgorithm(headerName: trailer.name) else { continue }
            if algorithm != declaredTrailer { throw .malformedTrailer(detail: "undeclared trailer \(trailer.name)") }
        }
        if let declaredTrailer, case .streaming(_, true, _) = mode {
            guard let trailer = trailers.first(where: { $0.name == declaredTrailer.headerName }) else {
                throw .missingTrailer(name: declaredTrailer.headerName)
            }
            guard declaredTrailer.isWellFormed(trailer.value) else { throw .invalidChecksumTrailer(name: declaredTrailer.headerName) }
            let value = computed[declaredTrailer] ?? ""
            if value != trailer.value { throw .checksumMismatch(algorithm: declaredTrailer, declared: trailer.value, computed: value) }
        }
        if let headerChecksum {
            let value = computed[headerChecksum.algorithm] ?? ""
            if value != headerChecksum.value {
                throw .checksumMismatch(algorithm: headerChecksum.algorithm, declared: headerChecksum.value, computed: value)
            }
        }
        return VerifiedPayload(length: length, checksums: computed, trailers: trailers)
    }
}
