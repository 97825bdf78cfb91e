import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// Fixture files and request builders shared by the SigV4 tests.
enum SigV4Fixtures {
    /// The repository root: four levels above this file (symlinks resolved, so scratch packages
    /// that link the test folder find the same files).
    static let repoRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url
    }()

    /// `<repoRoot>/../shared/reference`.
    static let reference = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/reference")
    static let sigv4 = reference.appendingPathComponent("sigv4")

    /// Whether the reference material sits beside the checkout; a fresh clone has no `../shared`, and
    /// the tests that read it skip (with `referenceMissing` as the reason) instead of failing.
    static let hasReference = FileManager.default.fileExists(atPath: reference.path)
    static let referenceMissing: Comment = "needs ../shared/reference beside the checkout (absent in a fresh clone)"

    static func text(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    static func bytes(_ url: URL) -> [UInt8] {
        (try? Array(Data(contentsOf: url))) ?? []
    }

    /// Parses a raw HTTP request (`METHOD target VERSION`, `Name:value` lines with obs-fold
    /// continuations, a blank line, the body) into a `Request` as the server would deliver it:
    /// header values stripped of surrounding whitespace, the target split at the first `?`.
    static func parseHTTP(_ raw: [UInt8]) -> Request {
        var headerEnd = raw.count
        var bodyStart = raw.count
        var i = 0
        while i + 1 < raw.count {
            if raw[i] == 0x0A && raw[i + 1] == 0x0A { headerEnd = i; bodyStart = i + 2; break }
            if i + 3 < raw.count, raw[i] == 0x0D, raw[i + 1] == 0x0A, raw[i + 2] == 0x0D, raw[i + 3] == 0x0A {
                headerEnd = i; bodyStart = i + 4; break
            }
            i += 1
        }
        let head = String(decoding: raw[0..<headerEnd], as: UTF8.self)
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) }
        let requestLine = lines.removeFirst()
        let firstSpace = requestLine.firstIndex(of: " ")!
        let lastSpace = requestLine.lastIndex(of: " ")!
        let method = String(requestLine[..<firstSpace])
        let target = String(requestLine[requestLine.index(after: firstSpace)..<lastSpace])
        var fields: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if line.first == " " || line.first == "\t", !fields.isEmpty {
                fields[fields.count - 1].value += "\n" + line
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        let trimmed = fields.map { (name: $0.name, value: $0.value.trimmingCharacters(in: .whitespaces)) }
        let (path, query, hasQuery) = Request.split(target: target)
        return Request(method: method, rawPath: path, rawQuery: query, hasQuery: hasQuery, headers: HTTPHeaders(trimmed),
                       body: Array(raw[min(bodyStart, raw.count)...]))
    }

    static func parseHTTP(_ text: String) -> Request { parseHTTP(Array(text.utf8)) }

    /// An instant from `yyyyMMdd'T'HHmmss'Z'`.
    static func instant(_ amzDate: String) -> Instant { SigV4Time.parseAmzDate(amzDate)! }

    /// A frozen clock.
    static func clock(_ amzDate: String) -> Clock { Clock(frozenAt: instant(amzDate)) }

    static func sha256Hex(_ bytes: [UInt8]) -> String { Hex.encode(Digest.sha256(bytes)) }

    /// Runs `body` through a verifier in pieces of `split` bytes; returns the emitted bytes.
    static func run(_ verifier: PayloadVerifier, _ body: [UInt8], split: Int = Int.max) throws(SigV4Failure) -> (bytes: [UInt8], payload: VerifiedPayload) {
        var out = [UInt8]()
        var start = 0
        while start < body.count {
            let end = start + min(max(1, split), body.count - start)
            var failure: SigV4Failure?
            body[start..<end].withUnsafeBytes { raw in
                do throws(SigV4Failure) {
                    try verifier.feed(raw) { out.append(contentsOf: $0) }
                } catch { failure = error }
            }
            if let failure { throw failure }
            start = end
        }
        return (out, try verifier.finish())
    }
}

/// The failure of a result, or nil on success.
extension Result where Failure == SigV4Failure {
    var sigFailure: SigV4Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }

    var sigValue: Success? {
        if case .success(let v) = self { return v }
        return nil
    }
}
