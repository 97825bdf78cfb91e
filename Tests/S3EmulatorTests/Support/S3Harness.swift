import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite
@testable import S3Emulator

/// A fresh S3 service over an in-memory database with a frozen clock, and a client that signs
/// requests as the SDKs do and drives `dispose` the way the HTTP server would.
final class S3Harness: @unchecked Sendable {
    static let start = Instant(rfc3339: "2026-11-30T06:33:14Z")!

    let database: Database
    let clock: Clock
    let service: S3Service
    let signer: RequestSigner
    let host: String

    init(configuration: S3Configuration = S3Configuration(), database: Database? = nil, host: String = "127.0.0.1:9000",
         logger: Logger = Logger(quiet: true, sink: { _ in })) throws {
        let db = try database ?? Database(path: nil)
        try db.migrate(S3Service.migrations)
        self.database = db
        clock = Clock(frozenAt: S3Harness.start)
        service = try S3Service(database: db, clock: clock, ids: IDGenerator(seed: 1), logger: logger,
                                configuration: configuration)
        let credential = configuration.credentials.first ?? S3Configuration.Credential(accessKey: "test", secretKey: "test")
        signer = RequestSigner(accessKey: credential.accessKey, secret: credential.secretKey, region: configuration.region)
        self.host = host
    }

    /// A signed request (header SigV4, payload hash = SHA-256 of the body unless given).
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
                 host: String? = nil, payloadHash: String? = nil, signer: RequestSigner? = nil, signed: Bool = true) -> Request {
        var h = HTTPHeaders()
        h.add("Host", host ?? self.host)
        for (n, v) in headers { h.add(n, v) }
        if !body.isEmpty || ["PUT", "POST"].contains(method), h["Content-Length"] == nil, h["Transfer-Encoding"] == nil {
            h.add("Content-Length", String(body.count))
        }
        guard signed else { return Request(method: method, target: target, headers: h, body: body) }
        return (signer ?? self.signer).signedRequest(method: method, target: target, headers: h, body: body, date: clock.now(),
                                                      payloadHash: payloadHash)
    }

    /// Sends a signed request and returns the full response.
    @discardableResult
    func call(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
              host: String? = nil) -> S3TestResponse {
        send(request(method, target, headers: headers, body: body, host: host))
    }

    /// Sends `body` as a signed aws-chunked upload (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]`).
    func chunkedPut(_ target: String, payload: [UInt8], chunkSize: Int = 64 << 10, trailer: ChecksumAlgorithm? = nil,
                    headers: [(String, String)] = [], tamper: ((inout [UInt8]) -> Void)? = nil) -> S3TestResponse {
        let mode = trailer == nil ? "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" : "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
        let now = clock.now()
        var framedLength = signer.awsChunked(payload, chunkSize: chunkSize, seedSignature: String(repeating: "0", count: 64), date: now,
                                             signed: true, trailer: trailer).count
        var h = HTTPHeaders()
        h.add("Host", host)
        h.add("Content-Encoding", "aws-chunked")
        if !headers.contains(where: { $0.0.lowercased() == "x-amz-decoded-content-length" }) {
            h.add("x-amz-decoded-content-length", String(payload.count))
        }
        if let trailer { h.add("x-amz-trailer", trailer.headerName) }
        for (n, v) in headers { h.add(n, v) }
        h.add("Content-Length", String(framedLength))
        h.add("x-amz-content-sha256", mode)
        let (path, query, _) = Request.split(target: target)
        let (signedHeaders, seed) = signer.sign(method: "PUT", rawPath: path, rawQuery: query, headers: h, payloadHash: mode, date: now)
        var body = signer.awsChunked(payload, chunkSize: chunkSize, seedSignature: seed, date: now, signed: true, trailer: trailer)
        framedLength = body.count
        tamper?(&body)
        let request = Request(method: "PUT", rawPath: path, rawQuery: query, headers: signedHeaders, body: body)
        return send(request, chunkSize: 7_919)
    }

    /// Drives `dispose` like the server: respond, collect, or stream the body in `chunkSize` pieces.
    func send(_ request: Request, chunkSize: Int = 65_536, abandonAfter: Int? = nil) -> S3TestResponse {
        let response: Response
        switch service.dispose(request) {
        case .respond(let r):
            response = r
        case .collect(let limit, let tooLarge, let handler):
            response = request.body.count > limit ? tooLarge : handler(request)
        case .collectDeferred(let limit, let tooLarge, let handler):
            response = request.body.count > limit ? tooLarge : DeferredAnswer.wait { handler(request, $0) }
        case .stream(let consumer):
            var offset = 0
            while offset < request.body.count {
                if let abandonAfter, offset >= abandonAfter {
                    consumer.abandon()
                    return S3TestResponse(status: 0, headers: HTTPHeaders(), body: [], streamed: false)
                }
                let end = min(offset + chunkSize, request.body.count)
                request.body[offset..<end].withUnsafeBytes { consumer.consume($0) }
                offset = end
            }
            if abandonAfter != nil {
                consumer.abandon()
                return S3TestResponse(status: 0, headers: HTTPHeaders(), body: [], streamed: false)
            }
            response = consumer.finish()
        }
        return S3TestResponse(response)
    }

    /// Creates a bucket, failing loudly when it cannot.
    func makeBucket(_ name: String) {
        let r = call("PUT", "/\(name)")
        precondition(r.status == 200, "create bucket \(name): \(r.status) \(r.text)")
    }

    /// Stores an object with PutObject.
    @discardableResult
    func put(_ bucket: String, _ key: String, _ body: [UInt8], headers: [(String, String)] = []) -> S3TestResponse {
        call("PUT", "/\(bucket)/\(S3Harness.encode(key))", headers: headers, body: body)
    }

    /// Rows holding body bytes: chunk rows, and small bodies kept in their blob's own row.
    func bodyRowCount() throws -> Int64? {
        try database.read { c in
            try c.scalarInt("SELECT (SELECT count(*) FROM s3_chunks) + (SELECT count(*) FROM s3_blobs WHERE data IS NOT NULL)")
        }
    }

    /// The bytes of every row holding body bytes, concatenated: what a reader of the file would find.
    func storedBodyBytes() throws -> [UInt8] {
        try database.read { c in
            try c.rows("SELECT data FROM s3_chunks UNION ALL SELECT data FROM s3_blobs WHERE data IS NOT NULL") { row in
                row.withBlob(0) { Array($0) }
            }
        }.flatMap { $0 }
    }

    /// Percent-encodes a key for a path (RFC 3986 unreserved kept, `/` kept).
    static func encode(_ key: String) -> String {
        var out = ""
        for b in key.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(Character(Unicode.Scalar(b)))
            default:
                out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    /// Deterministic pseudo-random bytes.
    static func bytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var state = seed
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var v = state
            for _ in 0..<8 where out.count < count {
                out.append(UInt8(truncatingIfNeeded: v >> 33))
                v >>= 8
            }
        }
        return out
    }

    static func base64MD5(_ bytes: [UInt8]) -> String { Data(Digest.md5(bytes)).base64EncodedString() }
}

/// A response with its body read out.
struct S3TestResponse {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]
    /// Whether the body came from a stream source.
    let streamed: Bool

    init(status: Int, headers: HTTPHeaders, body: [UInt8], streamed: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        self.streamed = streamed
    }

    /// The length a streamed body announced (Content-Length of GET/HEAD answers).
    var declaredLength: Int64?

    init(_ response: Response) {
        status = response.status
        headers = response.headers
        switch response.body {
        case .empty:
            body = []
            streamed = false
        case .bytes(let b):
            body = b
            streamed = false
            declaredLength = Int64(b.count)
        case .stream(let length, let source):
            var out = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 50_000)
            while true {
                let n = (try? buffer.withUnsafeMutableBytes { try source.read(into: $0) }) ?? 0
                if n == 0 { break }
                out += buffer[0..<n]
            }
            source.close()
            body = out
            streamed = true
            declaredLength = length
        case .push(let source):  // the hub's server-sent events only
            source.close()
            body = []
            streamed = true
        }
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    var xml: XMLElement? { try? S3XMLParser.parse(body) }
    var errorCode: String? { xml.flatMap { $0.name == "Error" ? $0.childText("Code") : nil } }
    func header(_ name: String) -> String? { headers[name] }
}
