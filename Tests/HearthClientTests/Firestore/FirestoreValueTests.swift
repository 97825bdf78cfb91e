import Foundation
import Testing
@testable import HearthClient

@Suite struct FirestoreValueTests {
    func json(_ v: FirestoreValue) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(v), as: UTF8.self)
    }

    @Test(arguments: [
        (FirestoreValue.null, #"{"nullValue":null}"#),
        (.boolean(false), #"{"booleanValue":false}"#),
        (.integer(-9_007_199_254_740_993), #"{"integerValue":"-9007199254740993"}"#),
        (.double(1.5), #"{"doubleValue":1.5}"#),
        (.double(.nan), #"{"doubleValue":"NaN"}"#),
        (.double(.infinity), #"{"doubleValue":"Infinity"}"#),
        (.double(-.infinity), #"{"doubleValue":"-Infinity"}"#),
        (.timestamp(Timestamp(seconds: 0, nanos: 1000)), #"{"timestampValue":"1970-01-01T00:00:00.000001Z"}"#),
        (.string("a\"b"), #"{"stringValue":"a\"b"}"#),
        (.bytes(Data([0xfb, 0xff])), #"{"bytesValue":"+/8="}"#),
        (.reference("projects/p/databases/(default)/documents/a/b"), #"{"referenceValue":"projects/p/databases/(default)/documents/a/b"}"#),
        (.geoPoint(GeoPoint(latitude: 1, longitude: -2)), #"{"geoPointValue":{"latitude":1,"longitude":-2}}"#),
        (.array([]), #"{"arrayValue":{}}"#),
        (.array([.integer(1)]), #"{"arrayValue":{"values":[{"integerValue":"1"}]}}"#),
        (.map([:]), #"{"mapValue":{}}"#),
        (.map(["b": .boolean(true), "a": .null]), #"{"mapValue":{"fields":{"a":{"nullValue":null},"b":{"booleanValue":true}}}}"#),
    ])
    func restJSONEncoding(_ value: FirestoreValue, _ expected: String) throws {
        #expect(try json(value) == expected)
        let back = try JSONDecoder().decode(FirestoreValue.self, from: Data(expected.utf8))
        if case .double(let d) = value, d.isNaN {
            guard case .double(let b) = back else { Issue.record("not a double"); return }
            #expect(b.isNaN)
        } else {
            #expect(back == value)
        }
    }

    @Test(arguments: [
        (#"{"integerValue": 7}"#, FirestoreValue.integer(7)),
        (#"{"doubleValue": 3}"#, .double(3)),
        (#"{"doubleValue": "2.5"}"#, .double(2.5)),
        (#"{"geoPointValue": {}}"#, .geoPoint(GeoPoint(latitude: 0, longitude: 0))),
        (#"{"bytesValue": "-_8"}"#, .bytes(Data([0xfb, 0xff]))),
        (#"{"timestampValue": "2024-02-29T23:59:59.5+01:00"}"#, .timestamp(Timestamp(seconds: 1_709_247_599, nanos: 500_000_000))),
    ])
    func lenientDecoding(_ json: String, _ expected: FirestoreValue) throws {
        #expect(try JSONDecoder().decode(FirestoreValue.self, from: Data(json.utf8)) == expected)
    }

    @Test(arguments: [#"{}"#, #"{"integerValue": "x"}"#, #"{"timestampValue": "yesterday"}"#, #"{"bytesValue": "%%"}"#, #"{"unknownValue": 1}"#])
    func malformedValuesFail(_ json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FirestoreValue.self, from: Data(json.utf8)) }
    }

    @Test func aRealDocumentDecodes() throws {
        let body = """
        {"name": "projects/demo-hearth/databases/(default)/documents/users/u1/files/f1",
         "fields": {"ownerUid": {"stringValue": "u1"}, "size": {"integerValue": "12"},
                    "createdAt": {"timestampValue": "2025-01-02T03:04:05.123456Z"}},
         "createTime": "2025-01-02T03:04:05.123456Z", "updateTime": "2025-01-02T03:04:05.123456Z"}
        """
        let doc = try JSONDecoder().decode(FirestoreDocument.self, from: Data(body.utf8))
        #expect(doc.path == "users/u1/files/f1")
        #expect(doc.id == "f1")
        struct F: Decodable { let ownerUid: String; let size: Int; let createdAt: Date }
        let f = try doc.data(as: F.self)
        #expect(f.ownerUid == "u1")
        #expect(f.size == 12)
        #expect(Timestamp(date: f.createdAt) == Timestamp(seconds: 1_735_787_045, nanos: 123_456_000))
        let empty = try JSONDecoder().decode(FirestoreDocument.self, from: Data(#"{"name": "projects/p/databases/(default)/documents/a/b"}"#.utf8))
        #expect(empty.fields.isEmpty)
    }

    /// A vector travels as its marked map and reads back as a vector; a map that only looks like one
    /// (another type name, a non-number, a third key) stays a map.
    @Test func vectorsTravelAsTheirMarkedMap() throws {
        let v = FirestoreValue.vector(VectorValue([1, -0.5]))
        #expect(try json(v) == #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1},{"doubleValue":-0.5}]}}}}}"#)
        #expect(try JSONDecoder().decode(FirestoreValue.self, from: Data(try json(v).utf8)) == v)
        let intElements = #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"integerValue":"2"}]}}}}}"#
        #expect(try JSONDecoder().decode(FirestoreValue.self, from: Data(intElements.utf8)) == .vector(VectorValue([2])))
        for notAVector in [
            #"{"mapValue":{"fields":{"__type__":{"stringValue":"__other__"},"value":{"arrayValue":{}}}}}"#,
            #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"stringValue":"x"}]}}}}}"#,
            #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{}},"x":{"nullValue":null}}}}"#,
        ] {
            guard case .map = try JSONDecoder().decode(FirestoreValue.self, from: Data(notAVector.utf8)) else {
                Issue.record("read as a vector: \(notAVector)"); continue
            }
        }
    }

    @Test func literalsBuildValues() {
        let v: FirestoreValue = ["a": 1, "b": [true, nil, "s", 2.5]]
        #expect(v == .map(["a": .integer(1), "b": .array([.boolean(true), .null, .string("s"), .double(2.5)])]))
    }
}
