import Foundation
import HearthCore
import HearthProtobuf
@testable import HearthHTTP
@testable import HearthGRPC
@testable import S3Emulator
@testable import FirestoreEmulator
import SecurityRules

/// The parsers that read untrusted bytes, each driven to the end of its input. A target never checks
/// answers (the unit tests do): it only has to finish without a crash, a sanitizer report or a hang.
enum FuzzTargets {
    static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Walks a message as the Firestore schema decoder does: every field, nested messages recursively.
    static func protobuf(_ bytes: UnsafeRawBufferPointer) {
        func walk(_ reader: inout ProtoReader) throws(ProtoDecodingError) {
            while let (_, wireType) = try reader.nextField() {
                switch wireType {
                case .lengthDelimited:
                    let saved = reader
                    if var nested = try? reader.readMessage() {
                        try? walk(&nested)
                    }
                    reader = saved
                    _ = try? reader.readString()
                    reader = saved
                    _ = try reader.readBytes()
                default:
                    try reader.skip(wireType)
                }
            }
        }
        var reader = ProtoReader(Array(bytes))
        try? walk(&reader)
        var packed = ProtoReader(Array(bytes))
        _ = try? packed.readVarints(.lengthDelimited)
        var fixed = ProtoReader(Array(bytes))
        _ = try? fixed.readFixed64s(.lengthDelimited)
    }

    static func rules(_ bytes: UnsafeRawBufferPointer) {
        _ = Ruleset.compile(text(bytes))
    }

    /// The Authorization header, the presigned query, and the canonical request built from them.
    static func sigV4(_ bytes: UnsafeRawBufferPointer) {
        let input = text(bytes)
        let parts = input.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let header = parts[0]
        let rawQuery = parts.count > 1 ? parts[1] : ""
        let rawPath = parts.count > 2 ? parts[2] : "/"
        let query = QueryParameters(rawQuery: rawQuery)
        let headers = [("host", "example.com"), ("x-amz-date", "20260101T000000Z"), ("x-amz-content-sha256", "UNSIGNED-PAYLOAD")]
        _ = try? AuthorizationParser.scheme(authorization: header, query: query)
        let auth = try? AuthorizationParser.parseHeader(header, headers: headers, expectedRegion: "us-east-1")
        _ = try? AuthorizationParser.parseQuery(query, expectedRegion: "us-east-1")
        _ = try? AuthorizationParser.parseSigV2Header(header)
        _ = try? AuthorizationParser.parseSigV2Query(query)
        _ = CanonicalRequest(method: "GET", rawPath: rawPath, rawQuery: rawQuery, presigned: true, headers: headers,
                             signedHeaders: auth?.signedHeaders ?? ["host"], payloadHash: "UNSIGNED-PAYLOAD")
        _ = CanonicalRequest.query(rawQuery: rawQuery, presigned: false, plus: .literal)
    }

    /// aws-chunked bodies (unsigned, so every framing path is reached), fed in two pieces.
    static func chunked(_ bytes: UnsafeRawBufferPointer) {
        let reader = ChunkedPayloadReader(signing: nil, declaredLength: nil)
        let cut = bytes.count / 2
        do throws(SigV4Failure) {
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<cut])) { _ in }
            try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[cut...])) { _ in }
            _ = try reader.finish()
        } catch {}
    }

    /// multipart/form-data with the boundary `hearth`, fed in pieces of 7 bytes.
    static func multipart(_ bytes: UnsafeRawBufferPointer) {
        var reader = MultipartFormReader(boundary: Array("hearth".utf8), maxHeaderBytes: 1 << 10)
        var offset = 0
        do throws(MultipartFormReader.Malformed) {
            while offset < bytes.count {
                let end = min(bytes.count, offset + 7)
                try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { _ in }
                offset = end
            }
            try reader.finish()
        } catch {}
    }

    /// S3's XML parser, then the documents whose numbers become dates — a restore's days, a
    /// lifecycle rule's days, an Object Lock default retention — and those dates computed and
    /// written as the answers write them, from two clock readings (now, and the last second of year
    /// 9999 a frozen clock may show). Each overflowed on some number a client could send.
    static func xml(_ bytes: UnsafeRawBufferPointer) {
        let body = Array(bytes)
        _ = try? S3XMLParser.parse(body)
        for now in [Instant(unixSeconds: 1_796_000_000), Instant(unixSeconds: Instant.latest.unixSeconds)] {
            if case .success(let restore) = RestoreRequest.parse(body), let days = restore.days {
                var extra = ObjectExtra()
                extra.restoreExpiry = S3Service.restoreExpiry(completed: now.unixSeconds + 48 * 3_600, days: days)
                _ = S3Service.restoreHeader(extra, now: now)
                var x = XMLWriter()
                S3Service.writeRestoreStatus(&x, extra, now: now)
            }
            if case .success(let lifecycle) = LifecycleConfiguration.parse(body, newID: { "id" }) {
                for rule in lifecycle.rules {
                    let days = [rule.expiration?.days, rule.noncurrentExpiration?.noncurrentDays, rule.abortDaysAfterInitiation]
                        + rule.transitions.map(\.days) + rule.noncurrentTransitions.map(\.noncurrentDays)
                    for case let d? in days { _ = LifecycleRunner.due(now, days: d).httpDate }
                }
            }
            if case .success(let lock) = ObjectLock.Configuration.parse(body), let retention = lock.defaultRetention(now: now) {
                _ = ObjectLock.format(retention.until)
            }
        }
    }

    /// Invariant: what parses is written as text that parses to the same text again. A number
    /// past a double's range once parsed as infinity and was written as `null`.
    static func json(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let value = try? JSON.parse(Array(bytes)) else { return }
        let written = value.utf8Bytes
        guard let again = try? JSON.parse(written), again.utf8Bytes == written else {
            throw FuzzFailure("json: \(text(bytes).debugDescription) is written as \(String(decoding: written, as: UTF8.self).debugDescription), which does not read back as itself")
        }
        FuzzChecks.count("json")
    }

    /// Firestore's REST value decoder, field paths and resource names.
    static func firestore(_ bytes: UnsafeRawBufferPointer) {
        let input = text(bytes)
        if let json = try? JSON.parse(Array(bytes)) {
            _ = try? ValueJSON.decodeFields(json, path: "doc")
            _ = try? ValueJSON.decode(json, path: "v")
        }
        _ = try? FieldPath.parse(input)
        if let (database, _) = try? ResourcePath.parseName(input) {
            _ = try? ResourcePath.parseDocumentName(input, in: database)
        }
        _ = ValueJSON.parseTimestamp(input)
        _ = ValueJSON.decodeBase64(input)
    }
}
