import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite
@testable import StorageEmulator

/// The Storage upload protocol: the pure parsers (multipart/related bodies and boundaries,
/// `Content-Range`, `Range`) on the input's first line, then a sequence of upload requests
/// chosen by the input — JSON API multipart and resumable sessions with chunk ranges, the
/// Firebase resumable protocol's commands and offsets, downloads with ranges — through the
/// service's own request handling on a fresh in-memory store. Invariants: no crash, never a 5xx,
/// every error a JSON `error` body, and a completed object downloads with the size and MD5 its
/// resource states.
extension FuzzTargets {
    static func storageUpload(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let text = text(bytes)
        let line = String(text.prefix { $0 != "\n" })
        _ = MultipartRelated.boundary(contentType: line)
        // The streaming multipart/related reader, fed the input in two pieces (a boundary or a head
        // cut anywhere must be found across the cut).
        var reader = MultipartRelated(boundary: line.isEmpty ? "b" : String(line.prefix(70)), maxHeadBytes: 4096)
        let cut = bytes.count / 2
        var mediaBytes = 0
        do {
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[..<cut])) { mediaBytes += $0.count }
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[cut...])) { mediaBytes += $0.count }
            try reader.finish()
        } catch {}
        if mediaBytes > bytes.count { throw FuzzFailure("multipart reader produced \(mediaBytes) media bytes from \(bytes.count)") }
        _ = ContentRange(line)
        _ = StorageService.parseRange(line, size: Int64(bytes.count))
        _ = StorageService.parseRange(line, size: 0)

        guard let service = StorageFuzzHarness.make() else { throw FuzzFailure("no storage service") }
        var input = FuzzInput(bytes)
        var sessions: [String] = []  // upload URLs
        let bucket = StorageFuzzHarness.bucket
        for _ in 0..<12 where !input.isAtEnd {
            let name = input.pick(["a.txt", "dir/b.bin", "c", "%2E", "..", "x%00y", ""])
            let body = input.raw(max: 40)
            let number = { (input: inout FuzzInput) -> String in
                input.pick(["0", "1", "5", "9", "10", "39", "40", "-1", "*", "", "9223372036854775807", "9223372036854775808"])
            }
            var headers: [(String, String)] = []
            let method: String
            let target: String
            switch input.below(8) {
            case 0:
                let boundary = input.pick(["b", "\"q q\"", "", "--", "x;y"])
                headers = [("Content-Type", "multipart/related; boundary=\(boundary)")]
                let framed = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n{\"name\":\"\(name)\"}\r\n--\(boundary)\r\nContent-Type: text/plain\r\n\r\n".utf8)
                    + body + Array("\r\n--\(boundary)--".utf8)
                try storageSend(service, "POST", "/upload/storage/v1/b/\(bucket)/o?uploadType=multipart",
                                headers, input.bool() ? framed : body, &input, sessions: &sessions)
                continue
            case 1:
                method = "POST"
                target = "/upload/storage/v1/b/\(bucket)/o?uploadType=resumable&name=\(name)"
                headers = [("Content-Type", "application/json"), ("X-Upload-Content-Length", number(&input))]
            case 2 where !sessions.isEmpty:
                method = "PUT"
                target = input.pick(sessions)
                headers = [("Content-Range", "bytes \(number(&input))-\(number(&input))/\(number(&input))")]
            case 3 where !sessions.isEmpty:
                method = input.pick(["PUT", "POST", "DELETE"])
                target = input.pick(sessions)
                headers = [("Content-Range", input.pick(["bytes */*", "bytes */10", "bytes 0-0/*", "Bytes 0-9/10", "bytes", "bytes 0-9/10/1"]))]
            case 4:
                method = "POST"
                target = "/v0/b/\(bucket)/o?name=\(name)"
                headers = [("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                           ("X-Goog-Upload-Header-Content-Length", number(&input)), ("Content-Type", "application/json")]
            case 5 where !sessions.isEmpty:
                method = "POST"
                target = input.pick(sessions)
                headers = [("X-Goog-Upload-Command", input.pick(["upload", "upload, finalize", "finalize", "query", "cancel", "start", "bogus", ""])),
                           ("X-Goog-Upload-Offset", number(&input))]
            case 6:
                method = "GET"
                target = input.pick(["/download/storage/v1/b/\(bucket)/o/\(name)?alt=media", "/v0/b/\(bucket)/o/\(name)?alt=media"])
                headers = [("Range", "bytes=\(number(&input))-\(number(&input))")]
            default:
                method = "POST"
                target = "/v0/b/\(bucket)/o?name=\(name)"
                headers = [("Content-Type", "text/plain")]
            }
            try storageSend(service, method, target, headers, body, &input, sessions: &sessions)
        }
    }

    /// One request; checks its answer and remembers session URLs it hands out.
    private static func storageSend(_ service: StorageService, _ method: String, _ target: String, _ headers: [(String, String)],
                                    _ body: [UInt8], _ input: inout FuzzInput, sessions: inout [String]) throws(FuzzFailure) {
        let response = StorageFuzzHarness.send(service, method, target, headers: headers, body: body, abandon: input.below(16) == 0)
        guard let (status, responseHeaders, responseBody) = response else { return }
        let what = "\(method) \(target) \(headers)"
        guard status < 500 else {
            throw FuzzFailure("\(what): \(status) \(String(decoding: responseBody, as: UTF8.self))")
        }
        if status >= 400, !responseBody.isEmpty {
            guard case .object(let o)? = try? JSON.parse(responseBody), o["error"] != nil else {
                throw FuzzFailure("\(what): \(status) without a JSON error: \(String(decoding: responseBody, as: UTF8.self))")
            }
        }
        for header in ["Location", "X-Goog-Upload-URL"] {
            if let url = responseHeaders[header], let path = URLComponents(string: url).map({ $0.percentEncodedPath + ($0.percentEncodedQuery.map { "?" + $0 } ?? "") }) {
                sessions.append(path)
            }
        }
        // A completed object: its download is the size and MD5 it was reported with.
        if status == 200, method != "GET", case .object(let o)? = try? JSON.parse(responseBody),
           let size = o["size"]?.stringValue, let md5 = o["md5Hash"]?.stringValue, let name = o["name"]?.stringValue,
           let bucket = o["bucket"]?.stringValue {
            let escaped = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
            guard let (s, _, data) = StorageFuzzHarness.send(service, "GET", "/download/storage/v1/b/\(bucket)/o/\(escaped)?alt=media",
                                                             headers: [], body: [], abandon: false), s == 200 else {
                throw FuzzFailure("\(what): object \(name) was stored but does not download")
            }
            guard String(data.count) == size, Data(Digest.md5(data)).base64EncodedString() == md5 else {
                throw FuzzFailure("\(what): object \(name) downloads \(data.count) bytes, stated size \(size) md5 \(md5)")
            }
            FuzzChecks.count("storage-upload")
        }
    }
}

/// A fresh in-memory Storage emulator (no rules: the JSON API is the owner's) for each input.
enum StorageFuzzHarness {
    static let bucket = "demo.appspot.com"

    static func make() -> StorageService? {
        guard let database = try? Database(path: nil), (try? database.migrate(StorageService.migrations)) != nil else { return nil }
        return try? StorageService(database: database, clock: Clock(frozenAt: Instant(unixSeconds: 1_767_225_600)), ids: IDGenerator(seed: 1),
                                   logger: Logger(quiet: true),
                                   configuration: StorageConfiguration(projectID: "demo", defaultBuckets: [bucket],
                                                                       rulesSource: "rules_version = '2'; service firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read, write: if true; } } }"),
                                   tokenVerifier: NoTokens(), firestore: nil)
    }

    struct NoTokens: IDTokenVerifier {
        func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
            throw .malformed("no tokens in the fuzz target")
        }
    }

    /// The request as the server hands it over: streamed bodies in 7-byte pieces, or cut off.
    static func send(_ service: StorageService, _ method: String, _ target: String, headers: [(String, String)], body: [UInt8],
                     abandon: Bool) -> (Int, HTTPHeaders, [UInt8])? {
        var h = HTTPHeaders()
        h.set("Host", "127.0.0.1:9199")
        h.set("Authorization", "Bearer owner")
        for (k, v) in headers { h.set(k, v) }
        let request = Request(method: method, target: target, headers: h, body: body)
        let response: Response
        switch service.dispose(request) {
        case .respond(let r): response = r
        case .collect(let limit, let tooLarge, let handler): response = body.count > limit ? tooLarge : handler(request)
        case .collectDeferred(let limit, let tooLarge, let handler):
            response = body.count > limit ? tooLarge : DeferredAnswer.wait { handler(request, $0) }
        case .stream(let consumer):
            var offset = 0
            while offset < body.count {
                let end = min(offset + 7, body.count)
                body[offset..<end].withUnsafeBytes { consumer.consume($0) }
                offset = end
                if abandon {
                    consumer.abandon()
                    return nil
                }
            }
            response = consumer.finish()
        }
        var out: [UInt8] = []
        switch response.body {
        case .empty: break
        case .bytes(let b): out = b
        case .stream(_, let source):
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while let n = try? buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
            source.close()
        case .push:
            // Storage never pushes (only the hub and UI listeners may); the invariant check sees it.
            return (599, response.headers, [])
        }
        return (response.status, response.headers, out)
    }
}
