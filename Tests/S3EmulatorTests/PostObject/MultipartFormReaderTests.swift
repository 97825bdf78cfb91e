import Foundation
import Testing
@testable import S3Emulator

/// The streaming multipart/form-data reader: every piece size gives the same parts; the syntax
/// variants real clients send parse; malformed bodies fail with a reason.
@Suite struct MultipartFormReaderTests {
    /// A part as the tests compare it.
    struct Parsed: Equatable, CustomStringConvertible {
        var name: String
        var filename: String?
        var contentType: String?
        var data: [UInt8]
        var dataOffset: Int64
        var description: String { "\(name)(\(filename ?? "-"), \(contentType ?? "-")) \(String(decoding: data, as: UTF8.self))" }
    }

    /// Reads `body` fed `pieceSize` bytes at a time.
    static func read(_ body: [UInt8], boundary: String = "XyZ", pieceSize: Int = .max) throws -> (parts: [Parsed], complete: Bool) {
        var reader = MultipartFormReader(boundary: Array(boundary.utf8), maxHeaderBytes: 1024)
        var parts: [Parsed] = []
        var open = false
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + max(1, min(pieceSize, body.count)))
            let piece = Array(body[offset..<end])
            try piece.withUnsafeBytes { raw in
                try reader.feed(raw) { event in
                    switch event {
                    case .partBegin(let p, let dataOffset):
                        parts.append(Parsed(name: p.name, filename: p.filename, contentType: p.contentType, data: [], dataOffset: dataOffset))
                        open = true
                    case .partData(let bytes):
                        precondition(open, "data outside a part")
                        parts[parts.count - 1].data += bytes
                    case .partEnd:
                        open = false
                    case .end:
                        break
                    }
                }
            }
            offset = end
        }
        try reader.finish()
        return (parts, reader.isComplete)
    }

    static let standard = Array((
        "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nuser/${filename}\r\n"
        + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n"
        + "hello\r\n--Xy\r\n--notb\r\n-\r\nmore\r\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"submit\"\r\n\r\nGo\r\n--XyZ--\r\n").utf8)

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 11, 64, Int.max])
    func everyPieceSizeReadsTheSameParts(pieceSize: Int) throws {
        let (parts, complete) = try Self.read(Self.standard, pieceSize: pieceSize)
        #expect(complete)
        #expect(parts.map(\.name) == ["key", "file", "submit"])
        #expect(String(decoding: parts[0].data, as: UTF8.self) == "user/${filename}")
        // Delimiter look-alikes inside the data are data.
        #expect(String(decoding: parts[1].data, as: UTF8.self) == "hello\r\n--Xy\r\n--notb\r\n-\r\nmore\r\r\n")
        #expect(parts[1].filename == "a.txt")
        #expect(parts[1].contentType == "text/plain")
        #expect(parts[2].data == Array("Go".utf8))
        // The file's first byte follows its header block.
        #expect(parts[1].dataOffset == Self.offset(after: "text/plain\r\n\r\n", in: Self.standard))
        #expect(parts[0].dataOffset == Self.offset(after: "name=\"key\"\r\n\r\n", in: Self.standard))
    }

    @Test func binaryDataWithEveryByteValueSurvives() throws {
        let payload = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 256) } + Array("\r\n--XyY\r\n--Xy\r".utf8)
        var body = Array("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.bin\"\r\n\r\n".utf8)
        body += payload + Array("\r\n--XyZ--".utf8)
        for size in [1, 13, 4096, Int.max] {
            let (parts, _) = try Self.read(body, pieceSize: size)
            #expect(parts.count == 1)
            #expect(parts.first?.data == payload, "piece size \(size)")
        }
    }

    @Test func preambleAndEpilogueAreIgnored() throws {
        let body = Array("This is a preamble.\r\n--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ--\r\nepilogue --XyZ garbage".utf8)
        let (parts, complete) = try Self.read(body, pieceSize: 3)
        #expect(complete)
        #expect(parts.map(\.name) == ["a"])
        #expect(parts[0].data == [0x31])
    }

    @Test func paddingAfterABoundaryIsAllowed() throws {
        let body = Array("--XyZ  \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ-- \r\n".utf8)
        #expect(try Self.read(body).parts.map(\.name) == ["a"])
    }

    @Test func aPartWithoutDataAndAFormWithoutParts() throws {
        let empty = Array("--XyZ\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--XyZ--".utf8)
        let parsed = try Self.read(empty)
        #expect(parsed.parts == [Parsed(name: "empty", filename: nil, contentType: nil, data: [],
                                        dataOffset: Self.offset(after: "\"empty\"\r\n\r\n", in: empty))])
        #expect(try Self.read(Array("--XyZ--\r\n".utf8)) == ([], true))
    }

    /// Content-Disposition spellings real clients send (RFC 7578, RFC 2183, browsers).
    @Test(arguments: [
        ("Content-Disposition: form-data; name=\"f\"; filename=\"a.txt\"", "f", "a.txt"),
        ("content-disposition:form-data;name=\"f\";filename=\"a.txt\"", "f", "a.txt"),
        ("Content-Disposition: form-data; name=f; filename=a.txt", "f", "a.txt"),
        ("Content-Disposition: FORM-DATA;\tfilename=\"a.txt\";\tname=\"f\"", "f", "a.txt"),
        ("Content-Disposition: form-data; name=\"f\"; filename=\"a\\\"b.txt\"", "f", "a\"b.txt"),
        ("Content-Disposition: form-data; name=\"f\"; filename=\"C:\\dir\\a.txt\"", "f", "C:\\dir\\a.txt"),
        ("Content-Disposition: form-data; name=\"f\"; filename=\"x.txt\"; filename*=UTF-8''na%C3%AFve.txt", "f", "naïve.txt"),
        ("Content-Disposition: form-data; name=\"f\"; filename=\"\"", "f", ""),
        ("Content-Disposition: form-data;\r\n name=\"f\"", "f", nil),
        ("Content-Disposition: form-data; name=\"caf\u{e9}\"; filename=\"\u{1F600}.png\"", "caf\u{e9}", "\u{1F600}.png"),
    ] as [(String, String, String?)])
    func dispositionSpellings(header: String, name: String, filename: String?) throws {
        let body = Array("--XyZ\r\n\(header)\r\n\r\nv\r\n--XyZ--".utf8)
        let parts = try Self.read(body).parts
        #expect(parts.count == 1)
        #expect(parts.first?.name == name)
        #expect(parts.first?.filename == filename)
    }

    @Test(arguments: [
        ("", "no boundary line"),
        ("key=k&file=x", "no boundary line"),
        ("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1", "inside a part"),
        ("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ", "right after a boundary"),
        ("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n", "inside a part's headers"),
        ("--XyZx\r\n", "followed by other characters"),
        ("--XyZ\r\nContent-Type: text/plain\r\n\r\n1\r\n--XyZ--", "no Content-Disposition"),
        ("--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\n1\r\n--XyZ--", "not form-data"),
        ("--XyZ\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\n1\r\n--XyZ--", "no name parameter"),
        ("--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n--XyZ--", "cannot be parsed"),
        ("--XyZ\r\nno colon here\r\n\r\n1\r\n--XyZ--", "has no ':'"),
        ("--XyZ-\r\n", "single '-'"),
        ("--XyZ\rX", "does not end in CRLF"),
        ("--XyZ\r\nX-Long: " + String(repeating: "a", count: 2000) + "\r\n\r\n", "longer than 1024 bytes"),
    ])
    func malformedBodies(body: String, reason: String) {
        for size in [1, 5, Int.max] {
            #expect {
                _ = try Self.read(Array(body.utf8), pieceSize: size)
            } throws: { error in
                (error as? MultipartFormReader.Malformed)?.reason.contains(reason) == true
            }
        }
    }

    @Test(arguments: [
        ("multipart/form-data; boundary=XyZ", FormContentType.formData(boundary: Array("XyZ".utf8))),
        ("Multipart/Form-Data; Boundary=\"a b:c\"", .formData(boundary: Array("a b:c".utf8))),
        ("multipart/form-data; boundary=XyZ; charset=UTF-8", .formData(boundary: Array("XyZ".utf8))),
        ("multipart/form-data;charset=UTF-8;boundary=----WebKitFormBoundaryQ", .formData(boundary: Array("----WebKitFormBoundaryQ".utf8))),
        ("multipart/form-data", .missingBoundary),
        ("multipart/form-data; boundary=", .missingBoundary),
        ("multipart/form-data; boundary=\"unterminated", .missingBoundary),
        ("application/x-www-form-urlencoded", .notFormData),
        ("multipart/mixed; boundary=XyZ", .notFormData),
        ("text/plain", .notFormData),
    ] as [(String, FormContentType)])
    func contentTypes(value: String, expected: FormContentType) {
        #expect(FormContentType.parse(value) == expected)
    }

    @Test func noContentTypeIsNotAForm() {
        #expect(FormContentType.parse(nil) == .notFormData)
    }

    @Test func aLargeFileIsPassedOnWithoutBeingHeld() throws {
        // 3 MiB in 64 KiB pieces: the reader hands data on as it arrives (at most a delimiter's
        // length held back), so the total matches and every piece's bytes are delivered.
        let data = MultipartFormReaderTests.pattern(3 << 20)
        var body = Array("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big\"\r\n\r\n".utf8)
        body += data + Array("\r\n--XyZ--\r\n".utf8)
        var reader = MultipartFormReader(boundary: Array("XyZ".utf8))
        var received = 0
        var digest = 0
        var maxLag = 0
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + (64 << 10))
            try body[offset..<end].withUnsafeBytes { raw in
                try reader.feed(raw) { event in
                    if case .partData(let bytes) = event {
                        for b in bytes { digest = digest &* 31 &+ Int(b) }
                        received += bytes.count
                    }
                }
            }
            offset = end
            let headerBytes = Int(Self.offset(after: "\"big\"\r\n\r\n", in: body))
            maxLag = max(maxLag, min(offset - headerBytes, data.count) - received)
        }
        #expect(received == data.count)
        #expect(digest == data.reduce(0) { $0 &* 31 &+ Int($1) })
        #expect(maxLag <= 6, "held back \(maxLag) bytes")
    }

    /// The offset just past the first occurrence of `needle` in `bytes`.
    static func offset(after needle: String, in bytes: [UInt8]) -> Int64 {
        let n = Array(needle.utf8)
        for i in 0...(bytes.count - n.count) where Array(bytes[i..<(i + n.count)]) == n { return Int64(i + n.count) }
        return -1
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) } }
}
