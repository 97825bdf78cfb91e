import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The LevelDB log container and the EntityProto decoding of Cloud Firestore emulator exports,
/// against the committed export the official emulator wrote (Tests/CompatTests/fixtures).
struct EmulatorExportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("CompatTests/fixtures/firestore-emulator-export").path

    static func log(_ records: [[UInt8]]) -> [UInt8] { LevelDBLogWriter.log(records) }

    @Test func readsRecordsSplitAcrossBlocks() throws {
        let records: [[UInt8]] = [Array("small".utf8), [UInt8](repeating: 7, count: 100_000), [], [UInt8](repeating: 1, count: 32_761)]
        let bytes = Self.log(records)
        #expect(bytes.count > 3 * LevelDBLogReader.blockSize)
        #expect(try LevelDBLogReader.records(bytes) == records)
    }

    @Test func refusesACorruptOrTruncatedLog() throws {
        var bytes = Self.log([[UInt8](repeating: 7, count: 40_000)])
        bytes[20] ^= 1
        #expect(throws: LevelDBLogReader.Failure.self) { _ = try LevelDBLogReader.records(bytes) }
        let whole = Self.log([[UInt8](repeating: 7, count: 40_000)])
        #expect(throws: LevelDBLogReader.Failure.self) { _ = try LevelDBLogReader.records(Array(whole.prefix(LevelDBLogReader.blockSize))) }
    }

    @Test func decodesTheOfficialEmulatorsExportExactly() throws {
        guard let metadata = FirestoreService.overallExportMetadata(in: Self.fixtures + "/default") else {
            Issue.record("fixture missing at \(Self.fixtures)")
            return
        }
        let documents = try FirestoreService.emulatorExportDocuments(metadataPath: metadata, project: "imported")
        let byName = Dictionary(uniqueKeysWithValues: documents.map { ($0["name"]!.stringValue!, $0["fields"]!) })
        let prefix = "projects/imported/databases/(default)/documents/"
        #expect(Set(byName.keys) == Set(["seed/all-types", "seed/all-types/sub/child", "seed/é id", "seed/__id42__", "other/1", "big/long"].map { prefix + $0 }))
        let f = try #require(byName[prefix + "seed/all-types"])
        #expect(f["int"] == .object(["integerValue": .string("-9223372036854775808")]))
        #expect(f["big"] == .object(["integerValue": .string("9223372036854775807")]))
        #expect(f["nan"] == .object(["doubleValue": .string("NaN")]))
        #expect(f["inf"] == .object(["doubleValue": .string("-Infinity")]))
        #expect(f["double"] == .object(["doubleValue": .double(0.1)]))
        #expect(f["null"] == .object(["nullValue": .null]))
        #expect(f["time"] == .object(["timestampValue": .string("2026-01-02T03:04:05.123456Z")]))
        #expect(f["old"] == .object(["timestampValue": .string("1900-01-01T00:00:00.000000Z")]))
        #expect(f["string"] == .object(["stringValue": .string("h\u{e9}llo\n\u{0}\u{1F525}")]))
        #expect(f["bytes"] == .object(["bytesValue": .string("AAH/")]))
        // A reference into the exported app follows the documents into the target project.
        #expect(f["ref"] == .object(["referenceValue": .string("projects/imported/databases/(default)/documents/a/b")]))
        #expect(f["geo"] == .object(["geoPointValue": .object(["latitude": .double(-33.5), "longitude": .double(151.25)])]))
        #expect(f["emptyArray"] == .object(["arrayValue": .object([:])]))
        #expect(f["emptyMap"] == .object(["mapValue": .object([:])]))
        #expect(f["array"] == .object(["arrayValue": .object(["values": .array([
            .object(["integerValue": .string("1")]), .object(["stringValue": .string("two")]),
            .object(["mapValue": .object(["fields": .object(["k": .object(["nullValue": .null])])])]),
        ])])]))
        #expect(f["map"]?["mapValue"]?["fields"]?["a.b"] == .object(["integerValue": .string("7")]))
        #expect(f["map"]?["mapValue"]?["fields"]?["nested"]?["mapValue"]?["fields"]?["deep"] == .object(["booleanValue": .bool(false)]))
        #expect(byName[prefix + "big/long"]?["text"]?["stringValue"]?.stringValue == String(repeating: "x", count: 40000) + "end")
    }

    /// A vector is exported as one double property per element with meaning 31 (the emulator's
    /// export of `{v: vector([1.5, -2]), m: {inner: vector([0.25])}}`).
    @Test func vectorsDecodeAsVectors() throws {
        let metadata = try #require(FirestoreService.overallExportMetadata(in: Self.fixtures + "/vector"))
        let documents = try FirestoreService.emulatorExportDocuments(metadataPath: metadata, project: "p")
        let fields = try #require(documents.first?["fields"])
        let decoded = try ValueJSON.decodeFields(fields, path: "fields")
        #expect(decoded == ["v": .vector([1.5, -2]), "m": .map(["inner": .vector([0.25])])])
    }

    @Test func aNamedDatabaseKeepsItsName() throws {
        let metadata = try #require(FirestoreService.overallExportMetadata(in: Self.fixtures + "/named-db"))
        let documents = try FirestoreService.emulatorExportDocuments(metadataPath: metadata, project: "p")
        #expect(documents.map { $0["name"]?.stringValue } == ["projects/p/databases/other-db/documents/named/doc"])
    }

    /// Numeric (Datastore) ids arrive as `__id<N>__`; the official emulator accepts exactly the
    /// canonical non-zero 64-bit ones and calls the rest reserved (or not a 64-bit integer).
    @Test func numericDocumentIDsFollowTheOfficialEmulator() {
        for ok in ["__id42__", "__id-1__", "__id9223372036854775807__", "__id-9223372036854775808__"] {
            #expect(ResourcePath.numericID(ok) == true, "\(ok)")
        }
        #expect(ResourcePath.numericID("__id9223372036854775808__") == false)
        for reserved in ["__id0__", "__id007__", "__id-0__", "__id+5__", "__id1x__", "__id__", "__id-__", "__foo__"] {
            #expect(ResourcePath.numericID(reserved) == nil, "\(reserved)")
        }
    }
}
