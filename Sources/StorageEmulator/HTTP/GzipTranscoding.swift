import Foundation
import HearthHTTP

/// GCS's decompressive transcoding (cloud.google.com/storage/docs/transcoding): an object stored
/// gzip-compressed with `Content-Encoding: gzip` is served decompressed — without
/// `Content-Encoding` or `Content-Length`, with `Warning: 214 UploadServer gunzipped`, and with any
/// `Range` ignored (200 and the whole object) — unless the request accepts gzip
/// (`Accept-Encoding: gzip`: the stored bytes as they are, with `Content-Encoding: gzip`) or the
/// object's `Cache-Control` says `no-transform` (then always the stored bytes).
enum GzipTranscoding {
    /// Whether the object's metadata makes a download by `request` a transcoding one: stored with
    /// `Content-Encoding: gzip`, no `no-transform` in its `Cache-Control`, and a request that does
    /// not accept gzip. (Whether the bytes really are gzip is `isGzip`'s question.)
    static func applies(to object: StoredObject, request: Request) -> Bool {
        guard let encoding = object.contentEncoding, encoding.trimmingCharacters(in: .whitespaces).lowercased() == "gzip" else {
            return false
        }
        if let cacheControl = object.cacheControl, tokens(cacheControl).contains(where: { $0.name == "no-transform" }) { return false }
        return !acceptsGzip(request.headers["Accept-Encoding"])
    }

    /// Whether an `Accept-Encoding` header names gzip (or `x-gzip`) with a weight above 0.
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return tokens(header).contains { ($0.name == "gzip" || $0.name == "x-gzip") && $0.weight > 0 }
    }

    /// The comma-separated tokens of a header, lowercased, with their `q=` weight (1 when absent).
    private static func tokens(_ header: String) -> [(name: String, weight: Double)] {
        header.split(separator: ",").map { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            var weight = 1.0
            for p in parts.dropFirst() where p.hasPrefix("q=") { weight = Double(p.dropFirst(2)) ?? 1 }
            return (parts.first ?? "", weight)
        }
    }

    /// Whether `head` (the first bytes of an object) opens a gzip member (RFC 1952: ID1 ID2, CM = 8).
    /// An object that says `Content-Encoding: gzip` but is not gzip is not transcoded: the first of
    /// GCS's two criteria is that the file is gzip-compressed when stored.
    static func isGzip(_ head: some Collection<UInt8>) -> Bool {
        Array(head.prefix(3)) == [0x1f, 0x8b, 0x08]
    }

    /// Whether `bytes` inflate to their end without error (every member whole): run over a body
    /// held in memory before its headers are sent, reading the inflated bytes into one scratch
    /// buffer, so memory stays bounded however far they expand.
    static func inflatesWhole(_ bytes: [UInt8]) -> Bool {
        let source = GunzipBodySource(inner: BytesBodySource(bytes))
        defer { source.close() }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { scratch.deallocate() }
        do {
            while try source.read(into: scratch) > 0 {}
            return true
        } catch {
            return false
        }
    }

    /// Edits the object's media headers for a transcoded answer.
    static func transcodedHeaders(_ h: HTTPHeaders) -> HTTPHeaders {
        var h = h
        h.remove("Content-Encoding")
        // The range of a transcoded download is ignored: no byte ranges to offer.
        h.remove("Accept-Ranges")
        h.add("Warning", "214 UploadServer gunzipped")
        h.add("X-GUploader-Response-Body-Transformations", "gunzipped")
        return h
    }
}

/// Bytes already in memory, as a body source (what `GunzipBodySource` reads a small object from).
final class BytesBodySource: ResponseBodySource, @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        let n = min(buffer.count, bytes.count - position)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }

    func close() {
        lock.lock()
        bytes = []
        lock.unlock()
    }
}

/// The gzip stream `inner` produces, inflated as it is read: memory is one input buffer and
/// zlib's window, however far the object expands. Members that follow one another are all
/// inflated (as `gunzip` does); bytes after the last member that do not open another are ignored.
/// A stream that is corrupt or ends inside a member throws, which aborts the response: its
/// headers are already sent, so the client sees a body cut short (a body small enough to be
/// read whole is checked with `GzipTranscoding.inflatesWhole` first, and served as stored).
final class GunzipBodySource: ResponseBodySource, @unchecked Sendable {
    /// Why inflating stopped.
    struct Corrupt: Error {}

    private let lock = NSLock()
    private let inner: any ResponseBodySource
    private let inflater = Inflater()
    private let input: UnsafeMutableRawBufferPointer
    private var innerDone = false
    private var finished = false
    /// Between members: no byte of the next member has been inflated yet.
    private var atMemberStart = true
    private var members = 0

    init(inner: any ResponseBodySource, inputSize: Int = 64 << 10) {
        self.inner = inner
        input = .allocate(byteCount: inputSize, alignment: 16)
    }

    deinit {
        input.deallocate()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        if finished || buffer.isEmpty { return 0 }
        var written = 0
        while written < buffer.count {
            if inflater.pendingInput == 0 {
                if innerDone {
                    // The input ended: between members that is the end, inside one it is a cut.
                    guard atMemberStart, members > 0 else { throw Corrupt() }
                    finished = true
                    break
                }
                let n = try inner.read(into: input)
                if n == 0 {
                    innerDone = true
                    continue
                }
                inflater.feed(UnsafeRawBufferPointer(start: input.baseAddress, count: n))
            }
            if atMemberStart, members > 0, inflater.nextInputByte != 0x1f {
                // Not another member: trailing bytes, ignored (gunzip warns and stops there too).
                finished = true
                break
            }
            atMemberStart = false
            let step: Inflater.Step
            do {
                step = try inflater.inflate(into: UnsafeMutableRawBufferPointer(rebasing: buffer[written...]))
            } catch {
                throw Corrupt()
            }
            written += step.produced
            if step.ended {
                members += 1
                atMemberStart = true
                do { try inflater.reset() } catch { throw Corrupt() }
            }
        }
        return written
    }

    func close() {
        inner.close()
    }
}
