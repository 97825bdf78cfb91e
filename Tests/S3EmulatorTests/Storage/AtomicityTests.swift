import Foundation
import HearthCore
import HearthCrypto
import HearthSQLite
import Testing
@testable import S3Emulator

/// A failed upload never disturbs the object it would have replaced, and leaves no bytes behind.
@Suite struct AtomicityTests {
    func stagingCount(_ s3: S3Harness) throws -> Int64? {
        try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs WHERE staging = 1") }
    }

    func chunkCount(_ s3: S3Harness) throws -> Int64? { try s3.bodyRowCount() }

    func seeded() throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", Array("original".utf8))
        return s3
    }

    @Test func badChunkSignatureMidUpload() throws {
        let s3 = try seeded()
        let payload = S3Harness.bytes(3 << 20)
        let r = s3.chunkedPut("/bkt/k", payload: payload, chunkSize: 64 << 10) { body in
            // Flip one payload byte well after the first megabyte has been staged.
            body[body.count - 70_000] ^= 0xFF
        }
        #expect(r.status == 403)
        #expect(r.errorCode == "SignatureDoesNotMatch")
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try stagingCount(s3) == 0)
        #expect(try chunkCount(s3) == 1)
    }

    @Test func trailerChecksumMismatch() throws {
        let s3 = try seeded()
        let payload = S3Harness.bytes(2 << 20)
        let r = s3.chunkedPut("/bkt/k", payload: payload, chunkSize: 1 << 20, trailer: .crc32) { body in
            // Corrupt the trailer value (its base64 sits right before the trailer signature line).
            let marker = Array("x-amz-checksum-crc32:".utf8)
            var i = body.count - marker.count - 1
            while i > 0 && Array(body[i..<(i + marker.count)]) != marker { i -= 1 }
            let at = i + marker.count
            body[at] = body[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        }
        #expect(r.status == 400 || r.status == 403, "\(r.text)")
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try stagingCount(s3) == 0)
        #expect(try chunkCount(s3) == 1)
    }

    @Test func payloadHashMismatch() throws {
        let s3 = try seeded()
        let body = S3Harness.bytes(1_500_000)
        let request = s3.request("PUT", "/bkt/k", body: body, payloadHash: Hex.encode(Digest.sha256(Array("different".utf8))))
        let r = s3.send(request)
        #expect(r.status == 400)
        #expect(r.errorCode == "XAmzContentSHA256Mismatch")
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try chunkCount(s3) == 1)
    }

    @Test func clientDisconnect() throws {
        let s3 = try seeded()
        let request = s3.request("PUT", "/bkt/k", body: S3Harness.bytes(3 << 20))
        _ = s3.send(request, abandonAfter: 2 << 20 + 100)
        let log = s3.service.requestLog.recent(limit: 1)
        #expect(log.first?.status == 499)
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try stagingCount(s3) == 0)
        #expect(try chunkCount(s3) == 1)
    }

    @Test func sizeMismatchWithDecodedLength() throws {
        let s3 = try seeded()
        let payload = S3Harness.bytes(100_000)
        let r = s3.chunkedPut("/bkt/k", payload: payload, headers: [("x-amz-decoded-content-length", "100001")])
        #expect(r.status >= 400)
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try stagingCount(s3) == 0)
    }

    @Test func bodiesAreStoredInChunkRows() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = S3Harness.bytes(3 << 20 + 17)
        s3.put("bkt", "k", body)
        let sizes = try s3.database.read { c in try c.rows("SELECT length(data) FROM s3_chunks ORDER BY id") { $0.int(0) } }
        #expect(sizes == [1 << 20, 1 << 20, 1 << 20, 17])
        #expect(s3.call("GET", "/bkt/k").body == body)
    }

    @Test func orphanedStagingBlobsAreRemovedAtStart() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("s3-orphans-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("hearth.sqlite").path
        let stagedFiles: [Int64]
        do {
            let db = try Database(path: path)
            let s3 = try S3Harness(database: db)
            s3.makeBucket("bkt")
            s3.put("bkt", "kept", Array("kept".utf8))
            // A crash mid-upload leaves a staging blob with a chunk (the first MiB: its row comes
            // once the second is full, whose file is still being written).
            let writer = BlobWriter(database: db, now: S3Harness.start, checksums: [])
            try S3Harness.bytes((2 << 20) + 5).withUnsafeBytes { try writer.append($0) }
            #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs WHERE staging = 1") } == 1)
            stagedFiles = try db.read { c in try c.rows("SELECT file FROM s3_chunks WHERE file IS NOT NULL") { $0.int64(0) } }
        }
        #expect(stagedFiles.count == 1)
        let reopened = try Database(path: path)
        let s3 = try S3Harness(database: reopened)
        #expect(try stagingCount(s3) == 0)
        #expect(try chunkCount(s3) == 1)
        #expect(s3.call("GET", "/bkt/kept").text == "kept")
        // The staging chunk's file went with its row.
        for n in stagedFiles {
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("blobs/s3/\(n)").path))
        }
    }

    /// Concurrent PUTs share one group-committed transaction without savepoints: one refused by its
    /// precondition inside the batch (checked before it writes anything) leaves the others stored.
    @Test func refusedPutInABatchLeavesTheOthersStored() throws {
        // On disk: an in-memory database reads through the writer's connection, so the PUTs'
        // checks before their bodies would wait for the commit that holds the writer below.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("s3-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let s3 = try S3Harness(database: Database(path: dir.appendingPathComponent("hearth.sqlite").path))
        s3.makeBucket("bkt")
        s3.put("bkt", "k", Array("original".utf8))
        let commits = s3.service.commits
        let leading = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        // A first commit holds the writer until the three PUTs below are queued behind it; the
        // next leader then takes all three into one transaction.
        let lined = StatusBox()
        DispatchQueue.global().async(group: group) {
            _ = try? commits.perform { _ in
                leading.signal()
                let deadline = Date().addingTimeInterval(10)
                while commits.queued < 3 && Date() < deadline { usleep(1_000) }
                lined.set("queued", commits.queued)
            }
        }
        leading.wait()
        // Both `If-None-Match: *` PUTs of "d" pass the check made before the body (no "d" yet);
        // in the batch the second to run finds the first's object and is refused.
        let statuses = StatusBox()
        let puts: [(label: String, key: String, headers: [(String, String)])] = [
            ("b", "b", []), ("d1", "d", [("If-None-Match", "*")]), ("d2", "d", [("If-None-Match", "*")]),
        ]
        for put in puts {
            DispatchQueue.global().async(group: group) {
                statuses.set(put.label, s3.put("bkt", put.key, Array("new \(put.label)".utf8), headers: put.headers).status)
            }
        }
        group.wait()
        #expect(lined.all["queued"] == 3)
        let all = statuses.all
        #expect(all["b"] == 200)
        #expect(Set([all["d1"], all["d2"]]) == [200, 412])
        let winner = all["d1"] == 200 ? "d1" : "d2"
        #expect(s3.call("GET", "/bkt/d").text == "new \(winner)")
        #expect(s3.call("GET", "/bkt/b").text == "new b")
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try stagingCount(s3) == 0)
        #expect(try chunkCount(s3) == 3)
    }
}

/// Answers collected from concurrent requests.
private final class StatusBox: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [String: Int] = [:]

    func set(_ key: String, _ status: Int) {
        lock.lock()
        statuses[key] = status
        lock.unlock()
    }

    var all: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return statuses
    }
}
