import Foundation
import HearthHTTP
import HearthSQLite

/// Streams a byte range of a blob to the client, reading one chunk row at a time on demand.
///
/// The slices to read are fixed when the response is created (in the same read transaction as
/// the object's metadata); chunk bytes are read lazily, so memory stays at one chunk. If the
/// object is replaced while a download is still running, its chunks disappear and the read
/// throws, which closes the connection mid-body — the client sees a truncated download rather
/// than a mix of two versions.
public final class BlobBodySource<Namespace: BlobNamespace>: ResponseBodySource, @unchecked Sendable {
    // The server calls read/close from one thread at a time; the lock makes that explicit.
    private let lock = NSLock()
    private let database: Database
    private var segments: [BlobStore<Namespace>.Segment]
    private let start: Int64
    private let end: Int64
    private var segmentIndex = 0
    private var current: [UInt8] = []
    private var currentPosition = 0
    /// Opens sealed chunk rows (nil: the rows hold the bytes as sent).
    private let dataKey: BlobDataKey?

    /// A source for bytes `start..<end` made of `segments`, whose chunks are sealed with `dataKey` when given.
    public init(database: Database, segments: [BlobStore<Namespace>.Segment], start: Int64, end: Int64, dataKey: BlobDataKey? = nil) {
        self.database = database
        self.dataKey = dataKey
        self.segments = segments
        self.start = start
        self.end = end
    }

    /// Why a chunk could not be read.
    public struct ChunkMissing: Error {
        public init() {}
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        var written = 0
        while written < buffer.count {
            if currentPosition >= current.count {
                guard segmentIndex < segments.count else { break }
                try load(segments[segmentIndex])
                segmentIndex += 1
                continue
            }
            let n = min(buffer.count - written, current.count - currentPosition)
            current.withUnsafeBytes { src in
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + n)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[currentPosition..<(currentPosition + n)]))
            }
            written += n
            currentPosition += n
        }
        return written
    }

    private func load(_ s: BlobStore<Namespace>.Segment) throws {
        // The part of this slice inside the requested range, relative to the chunk.
        let from = max(s.offset, start)
        let to = min(s.offset + s.length, end)
        let lo = Int(s.chunkStart + (from - s.offset))
        let hi = lo + Int(to - from)
        let bytes = try BlobBodySource.chunkBytes(database, chunkID: s.chunkID, range: lo..<hi, dataKey: dataKey)
        current = bytes
        currentPosition = 0
    }

    /// Bytes `range` of a chunk's plaintext, opening a sealed row with `dataKey`.
    /// - Throws: `ChunkMissing` when the row is gone or shorter, `ChunkUnreadable` when it does not open.
    public static func chunkBytes(_ database: Database, chunkID: Int64, range: Range<Int>, dataKey: BlobDataKey?) throws -> [UInt8] {
        try database.read { c in try chunkBytes(c, chunkID: chunkID, range: range, dataKey: dataKey) }
    }

    /// `chunkBytes` inside a read the caller holds.
    public static func chunkBytes(_ c: Connection, chunkID: Int64, range: Range<Int>, dataKey: BlobDataKey?) throws -> [UInt8] {
        let (lo, hi) = (range.lowerBound, range.upperBound)
        let bytes: [UInt8]? = try BlobStore<Namespace>.chunkRow(c, chunkID: chunkID) { stored -> [UInt8]? in
            if let dataKey {
                let plain: [UInt8]
                switch stored {
                case .row(let raw): plain = try dataKey.open(raw)
                case .file(let number, let files):
                    guard let sealed = files.read(number, range: nil) else { return nil }
                    plain = try sealed.withUnsafeBytes { try dataKey.open($0) }
                }
                guard lo >= 0, hi <= plain.count, lo <= hi else { return nil }
                return lo == 0 && hi == plain.count ? plain : Array(plain[lo..<hi])
            }
            guard lo >= 0, lo <= hi else { return nil }
            switch stored {
            case .row(let raw):
                guard hi <= raw.count else { return nil }
                return [UInt8](UnsafeRawBufferPointer(rebasing: raw[lo..<hi]))
            case .file(let number, let files):
                // A file shorter than the slice reads as a missing chunk, never as other bytes.
                return files.read(number, range: lo..<hi)
            }
        }
        guard let bytes else { throw ChunkMissing() }
        return bytes
    }

    /// Bytes `start..<end` of the blob made of `segments`, read whole inside a read the caller
    /// holds (the one that found the segments): for a small body, sent from memory rather than
    /// streamed chunk by chunk in reads of their own.
    /// - Throws: `ChunkMissing` when a slice's row is gone or shorter, `ChunkUnreadable` when it does not open.
    public static func bytes(_ c: Connection, segments: [BlobStore<Namespace>.Segment], start: Int64, end: Int64,
                             dataKey: BlobDataKey? = nil) throws -> [UInt8] {
        func slice(_ s: BlobStore<Namespace>.Segment) throws -> [UInt8] {
            let from = max(s.offset, start), to = min(s.offset + s.length, end)
            let lo = Int(s.chunkStart + (from - s.offset))
            return try chunkBytes(c, chunkID: s.chunkID, range: lo..<(lo + Int(max(0, to - from))), dataKey: dataKey)
        }
        // The common small body is one slice: its bytes are the answer, with no second copy.
        if segments.count == 1 { return try slice(segments[0]) }
        var out = [UInt8]()
        out.reserveCapacity(Int(max(0, end - start)))
        for s in segments { out += try slice(s) }
        return out
    }

    public func close() {
        lock.lock()
        segments = []
        current = []
        lock.unlock()
    }
}

/// A response body that is never read: HEAD answers that must announce the object's length.
public final class EmptyBodySource: ResponseBodySource {
    /// An empty body.
    public init() {}
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
    public func close() {}
}
