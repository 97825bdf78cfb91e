import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import StorageEmulator

/// GCS's decompressive transcoding: an object stored gzip-compressed with `Content-Encoding: gzip`
/// is served inflated unless the request accepts gzip or the object says `no-transform`.
@Suite struct GzipTranscodingTests {
    let b = StorageHarness.bucket

    /// A gzip member of `data` in stored (uncompressed) deflate blocks: RFC 1952 framing around
    /// RFC 1951 §3.2.4 blocks, enough for zlib to inflate without a compressor in the tests.
    static func gzip(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8((~n >> 8) & 0xff)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        let crc = CRC32.checksum(data, variant: .ieee)
        for v in [crc, UInt32(truncatingIfNeeded: data.count)] {
            out += [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)]
        }
        return out
    }

    /// Uploads `stored` as `name` with `Content-Encoding: gzip` (and `cacheControl` when given)
    /// through a multipart upload; returns the object's download token.
    func upload(_ h: StorageHarness, _ name: String, _ stored: [UInt8], cacheControl: String? = nil) throws -> String {
        var meta: [(String, JSON)] = [("name", .string(name)), ("contentType", .string("text/plain")),
                                      ("contentEncoding", .string("gzip")), ("metadata", .object(["firebaseStorageDownloadTokens": .string("tok")]))]
        if let cacheControl { meta.append(("cacheControl", .string(cacheControl))) }
        let boundary = "xyz"
        var body = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n\(JSON.object(JSONObject(meta)).serialized())\r\n--\(boundary)\r\nContent-Type: text/plain\r\n\r\n".utf8)
        body += stored
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=multipart",
                       headers: [("Content-Type", "multipart/related; boundary=\(boundary)")], body: body)
        #expect(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
        #expect(r.json["contentEncoding"]?.stringValue == "gzip")
        return "tok"
    }

    /// Small objects (answered from the download cache), one chunk row, and several streamed chunks.
    @Test(arguments: [1_000, 300_000, 3 << 20])
    func aGzipObjectIsServedInflatedUnlessTheRequestAcceptsGzip(size: Int) throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(size)
        let stored = Self.gzip(data)
        let token = try upload(h, "g.txt", stored)
        let storedHash = "crc32c=\(StoredObject.base64(crc32c: CRC32.checksum(stored, variant: .castagnoli))),md5=\(Data(Digest.md5(stored)).base64EncodedString())"
        for path in ["/download/storage/v1/b/\(b)/o/g.txt?alt=media", "/storage/v1/b/\(b)/o/g.txt?alt=media",
                     "/v0/b/\(b)/o/g.txt?alt=media&token=\(token)", "/v0/b/\(b)/o/g.txt?alt=media"] {
            let owner = [("Authorization", "Bearer owner")]
            // Twice: the second answer may come from the download cache.
            for _ in 0..<2 {
                let plain = h.send("GET", path, headers: owner)
                #expect(plain.status == 200 && plain.body == data, "\(path)")
                #expect(plain.headers["Content-Encoding"] == nil)
                #expect(plain.headers["Warning"] == "214 UploadServer gunzipped")
                #expect(plain.headers["x-goog-stored-content-encoding"] == "gzip")
                #expect(plain.headers["x-goog-stored-content-length"] == String(stored.count))
                // The hash is the stored bytes' (what GCS keeps), not the inflated ones'.
                #expect(plain.headers["x-goog-hash"] == storedHash)
            }
            // A range is ignored: 200 and the whole object, even one past the end.
            for range in ["bytes=0-9", "bytes=-5", "bytes=\(stored.count + 10)-"] {
                let r = h.send("GET", path, headers: owner + [("Range", range)])
                #expect(r.status == 200 && r.body == data && r.headers["Content-Range"] == nil, "\(path) \(range)")
            }
            for accept in ["gzip", "gzip, deflate, br", "deflate;q=0.5, GZIP;q=0.8"] {
                let raw = h.send("GET", path, headers: owner + [("Accept-Encoding", accept)])
                #expect(raw.status == 200 && raw.body == stored, "\(path) \(accept)")
                #expect(raw.headers["Content-Encoding"] == "gzip" && raw.headers["Warning"] == nil)
                // Ranges of the stored bytes as they are.
                let part = h.send("GET", path, headers: owner + [("Accept-Encoding", accept), ("Range", "bytes=0-9")])
                #expect(part.status == 206 && part.body == Array(stored[0..<10]))
            }
            // gzip refused (q=0) or not named: inflated.
            for accept in ["identity", "gzip;q=0", "deflate, br"] {
                #expect(h.send("GET", path, headers: owner + [("Accept-Encoding", accept)]).body == data, "\(accept)")
            }
        }
    }

    @Test func noTransformServesTheStoredBytesAlways() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(5_000)
        let stored = Self.gzip(data)
        _ = try upload(h, "n.txt", stored, cacheControl: "public, No-Transform, max-age=60")
        let r = h.send("GET", "/download/storage/v1/b/\(b)/o/n.txt?alt=media", headers: [("Range", "bytes=0-9")])
        #expect(r.status == 206 && r.body == Array(stored[0..<10]))
        #expect(h.send("GET", "/download/storage/v1/b/\(b)/o/n.txt?alt=media").body == stored)
        // Patching the Cache-Control away makes it eligible again.
        let p = h.send("PATCH", "/storage/v1/b/\(b)/o/n.txt", body: Array(#"{"cacheControl": "public"}"#.utf8))
        #expect(p.status == 200)
        #expect(h.send("GET", "/download/storage/v1/b/\(b)/o/n.txt?alt=media").body == data)
    }

    /// `Content-Encoding: gzip` on bytes that are not gzip: not transcoded (GCS's first criterion
    /// is that the stored file is gzip), so the range is honoured and the bytes are as stored.
    @Test func bytesThatAreNotGzipAreServedAsStored() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(2_000)
        _ = try upload(h, "x.txt", data)
        let r = h.send("GET", "/download/storage/v1/b/\(b)/o/x.txt?alt=media", headers: [("Range", "bytes=0-9")])
        #expect(r.status == 206 && r.body == Array(data[0..<10]))
        #expect(h.send("GET", "/download/storage/v1/b/\(b)/o/x.txt?alt=media").headers["Content-Encoding"] == "gzip")
    }

    /// Inflating reads into whatever buffer the server offers, members one after another.
    @Test func theInflatingSourceReadsMembersInAnyBufferSize() throws {
        let a = StorageHarness.bytes(100_000), c = Array("tail".utf8)
        let stored = Self.gzip(a) + Self.gzip(c) + [0, 0, 0]
        for size in [1, 7, 4096, 1 << 20] {
            let source = GunzipBodySource(inner: BytesBodySource(stored), inputSize: 333)
            var out: [UInt8] = [], buffer = [UInt8](repeating: 0, count: size)
            while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
            source.close()
            #expect(out == a + c, "buffer \(size)")
        }
    }

    /// A body read whole (up to one chunk row) is inflated before its headers: gzip that is cut or
    /// corrupt is served as stored, whole, rather than as a transcoded body cut off mid-stream.
    @Test func aSmallCorruptGzipIsServedAsStored() throws {
        let h = try StorageHarness()
        let stored = Self.gzip(StorageHarness.bytes(10_000))
        let corrupt = Array(stored.prefix(10)) + [0x07] + stored.dropFirst(11)
        for (name, bytes) in [("cut.txt", Array(stored.dropLast(20))), ("bad.txt", corrupt)] {
            _ = try upload(h, name, bytes)
            // Twice: the first read fills the download cache, the second answers from it.
            for _ in 0..<2 {
                let r = h.send("GET", "/download/storage/v1/b/\(b)/o/\(name)?alt=media")
                #expect(r.status == 200 && r.body == bytes, "\(name)")
                #expect(r.headers["Content-Encoding"] == "gzip" && r.headers["Warning"] == nil)
            }
        }
    }

    @Test func aCutOrCorruptStreamThrows() throws {
        let stored = Self.gzip(StorageHarness.bytes(10_000))
        for bad in [Array(stored.dropLast(20)), Array(stored.prefix(12)), Array(stored.prefix(10)) + [0x07] + stored.dropFirst(11)] {
            let source = GunzipBodySource(inner: BytesBodySource(bad))
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(throws: GunzipBodySource.Corrupt.self) {
                while try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }) > 0 {}
            }
        }
    }
}
