import Foundation
import Testing
@testable import HearthClient

struct Address: Codable, Equatable {
    var city: String
    var zip: Int?
}

struct Everything: Codable, Equatable {
    var flag: Bool
    var small: Int8
    var count: Int
    var big: Int64
    var unsigned: UInt32
    var ratio: Double
    var single: Float
    var name: String
    var when: Date
    var stamp: Timestamp
    var blob: Data
    var place: GeoPoint
    var link: DocumentReference
    var site: URL
    var tags: [String]
    var matrix: [[Int]]
    var address: Address
    var lookup: [String: Int]
    var optionalPresent: String?
    var optionalAbsent: String?
    var raw: FirestoreValue
}

@Suite struct FirestoreCodingTests {
    let encoder = FirestoreEncoder(databaseRoot: "projects/p/databases/(default)")
    let decoder = FirestoreDecoder()

    var sample: Everything {
        Everything(flag: true, small: -3, count: 42, big: Int64.max, unsigned: 4_000_000_000, ratio: 0.25, single: 1.5, name: "héllo",
                   when: Date(timeIntervalSince1970: 1_700_000_000.123456), stamp: Timestamp(seconds: 5, nanos: 123_456_789),
                   blob: Data([0, 1, 2, 255]), place: GeoPoint(latitude: 48.85, longitude: 2.35),
                   link: DocumentReference(unchecked: "users/u1"), site: URL(string: "https://example.com/a?b=c")!,
                   tags: ["a", "b"], matrix: [[1, 2], [], [3]], address: Address(city: "Paris", zip: nil), lookup: ["x": 1, "y": 2],
                   optionalPresent: "here", optionalAbsent: nil, raw: .map(["k": .null]))
    }

    @Test func everySupportedTypeRoundTrips() throws {
        let value = try encoder.encode(sample)
        let back = try decoder.decode(Everything.self, from: value)
        #expect(back == sample)
    }

    @Test func typesMapToTheirFirestoreKinds() throws {
        guard case .map(let f) = try encoder.encode(sample) else { Issue.record("not a map"); return }
        #expect(f["flag"] == .boolean(true))
        #expect(f["small"] == .integer(-3))
        #expect(f["big"] == .integer(Int64.max))
        #expect(f["unsigned"] == .integer(4_000_000_000))
        #expect(f["ratio"] == .double(0.25))
        #expect(f["single"] == .double(1.5))
        #expect(f["when"] == .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 123_456_000)))
        #expect(f["blob"] == .bytes(Data([0, 1, 2, 255])))
        #expect(f["link"] == .reference("projects/p/databases/(default)/documents/users/u1"))
        #expect(f["site"] == .string("https://example.com/a?b=c"))
        #expect(f["matrix"] == .array([.array([.integer(1), .integer(2)]), .array([]), .array([.integer(3)])]))
        #expect(f["address"] == .map(["city": .string("Paris")]))  // nil optionals are omitted, as synthesized Codable skips them
        #expect(f["optionalAbsent"] == nil)
        #expect(f["raw"] == .map(["k": .null]))
    }

    @Test func explicitNilEncodesAsNull() throws {
        struct WithNull: Encodable {
            var note: String?
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(note, forKey: .note)
            }
            enum CodingKeys: CodingKey { case note }
        }
        #expect(try encoder.encode(WithNull(note: nil)) == .map(["note": .null]))
    }

    @Test func unsignedValuesBeyondInt64Fail() throws {
        #expect(throws: EncodingError.self) { try encoder.encode(UInt64.max) }
        #expect(throws: EncodingError.self) { try encoder.encode(["n": UInt64(Int64.max) + 1]) }
        #expect(try encoder.encode(UInt64(Int64.max)) == .integer(Int64.max))
    }

    @Test func numbersConvertWhenExact() throws {
        #expect(try decoder.decode(Double.self, from: .integer(3)) == 3)
        #expect(try decoder.decode(Int.self, from: .double(4)) == 4)
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .double(4.5)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int8.self, from: .integer(300)) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: .integer(-1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: .integer(1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Date.self, from: .string("2024-01-01T00:00:00Z")) }
    }

    @Test func missingFieldsAreKeyNotFound() {
        #expect(throws: DecodingError.self) { try decoder.decode(Address.self, fromFields: ["zip": .integer(1)]) }
    }

    @Test func serverTimestampSentinelsBecomeTransforms() throws {
        struct Meta: Codable, Equatable { @ServerTimestamp var at: Date? }
        struct FileDoc: Codable, Equatable {
            var s3Key: String
            var meta: [String: Meta]
            @ServerTimestamp var createdAt: Date?
        }
        let doc = try encoder.encodeDocument(FileDoc(s3Key: "k", meta: ["x y": Meta(at: nil)], createdAt: nil))
        #expect(doc.fields == ["s3Key": .string("k")])
        #expect(Set(doc.transforms.map(\.fieldPath.escaped)) == ["createdAt", "meta.`x y`.at"])
        #expect(doc.transforms.allSatisfy { $0.value == .serverTimestamp })

        let set = try encoder.encodeDocument(FileDoc(s3Key: "k", meta: [:], createdAt: Date(timeIntervalSince1970: 10)))
        #expect(set.fields["createdAt"] == .timestamp(Timestamp(seconds: 10)))
        #expect(set.fields["meta"] == .map([:]))
        #expect(set.transforms.isEmpty)
    }

    @Test func serverTimestampDecodesPresentOrMissing() throws {
        struct FileDoc: Codable {
            var s3Key: String
            @ServerTimestamp var createdAt: Timestamp?
        }
        let missing = try decoder.decode(FileDoc.self, fromFields: ["s3Key": .string("k")])
        #expect(missing.createdAt == nil)
        let present = try decoder.decode(FileDoc.self, fromFields: ["s3Key": .string("k"), "createdAt": .timestamp(Timestamp(seconds: 9))])
        #expect(present.createdAt == Timestamp(seconds: 9))
    }

    @Test func documentIDComesFromTheDocumentAndIsNeverWritten() throws {
        struct FileDoc: Codable {
            @DocumentID var id: String?
            var s3Key: String
        }
        let decoded = try decoder.decode(FileDoc.self, fromFields: ["s3Key": .string("k")], document: DocumentReference(unchecked: "users/u/files/f9"))
        #expect(decoded.id == "f9")
        let encoded = try encoder.encodeDocument(decoded)
        #expect(encoded.fields == ["s3Key": .string("k")])
    }

    @Test func sentinelsAreRefusedInArraysAndOutsideDocuments() {
        #expect(throws: EncodingError.self) { try encoder.encodeDocument(["list": [FieldValue.serverTimestamp]]) }
        #expect(throws: EncodingError.self) { try encoder.encode(["at": FieldValue.serverTimestamp]) }
        #expect(throws: EncodingError.self) { try encoder.encodeDocument(FieldValue.serverTimestamp) }
    }

    @Test func documentsMustBeMaps() {
        #expect(throws: EncodingError.self) { try encoder.encodeDocument("just a string") }
        #expect(throws: EncodingError.self) { try encoder.encodeDocument([1, 2]) }
    }

    @Test func deleteSentinelsAreListed() throws {
        let doc = try encoder.encodeDocument(["gone": FieldValue.delete, "kept": FieldValue.increment(Int64(2))] as [String: FieldValue])
        #expect(doc.deletes == [FieldPath(["gone"])])
        #expect(doc.transforms == [FieldTransform(fieldPath: FieldPath(["kept"]), value: .increment(.integer(2)))])
    }

    @Test func leafPathsDescendIntoMaps() throws {
        let doc = try encoder.encodeDocument(Everything.Leafy(a: 1, b: .init(c: "x", d: [:])))
        #expect(doc.leafPaths.map(\.escaped) == ["a", "b.c", "b.d"])
    }

    @Test func enumsAndSuperEncodersWork() throws {
        enum Kind: String, Codable { case photo, video }
        struct Media: Codable, Equatable { var kind: Kind; var kinds: [Kind] }
        let v = Media(kind: .video, kinds: [.photo])
        let encoded = try encoder.encode(v)
        #expect(encoded == .map(["kind": .string("video"), "kinds": .array([.string("photo")])]))
        #expect(try decoder.decode(Media.self, from: encoded) == v)

        class Base: Codable { var a = 1 }
        final class Derived: Base, @unchecked Sendable {
            var b = 2
            enum K: CodingKey { case b }
            override init() { super.init() }
            required init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: K.self)
                b = try c.decode(Int.self, forKey: .b)
                try super.init(from: c.superDecoder())
            }
            override func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: K.self)
                try c.encode(b, forKey: .b)
                try super.encode(to: c.superEncoder())
            }
        }
        let d = try encoder.encode(Derived())
        #expect(d == .map(["b": .integer(2), "super": .map(["a": .integer(1)])]))
        #expect(try decoder.decode(Derived.self, from: d).b == 2)
    }
}

extension Everything {
    struct Leafy: Encodable {
        struct Inner: Encodable { var c: String; var d: [String: Int] }
        var a: Int
        var b: Inner
    }
}
