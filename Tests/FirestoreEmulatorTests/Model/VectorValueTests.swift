import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Vector values: read from the typed map the SDKs send, refused with the official emulator's
/// words when malformed, written back as that map, stored and indexed as a value of their own.
@Suite struct VectorValueTests {
    static func vectorJSON(_ elements: String, extra: String = "") -> String {
        #"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[\#(elements)]}}\#(extra)}}}"#
    }

    static func decode(_ text: String, inArray: Bool = false) throws(FirestoreError) -> FirestoreValue {
        // Force-try safe: every text here is JSON.
        try ValueJSON.decode(try! JSON.parse(text), path: "document.fields[0].value", inArray: inArray)
    }

    @Test func theTypedMapIsAVector() throws {
        #expect(try Self.decode(Self.vectorJSON(#"{"doubleValue":1.5},{"doubleValue":"-Infinity"}"#)) == .vector([1.5, -.infinity]))
        // Member order does not matter; a map holding a vector keeps it.
        #expect(try Self.decode(#"{"mapValue":{"fields":{"value":{"arrayValue":{"values":[{"doubleValue":2}]}},"__type__":{"stringValue":"__vector__"}}}}"#) == .vector([2]))
        #expect(try Self.decode(#"{"mapValue":{"fields":{"m":\#(Self.vectorJSON(#"{"doubleValue":1}"#))}}}"#) == .map(["m": .vector([1])]))
        // A map without `__type__`, or typed as something else, stays a map.
        #expect(try Self.decode(#"{"mapValue":{"fields":{"value":{"arrayValue":{}}}}}"#) == .map(["value": .array([])]))
        #expect(try Self.decode(#"{"mapValue":{"fields":{"__type__":{"stringValue":"__other__"}}}}"#) == .map(["__type__": .string("__other__")]))
        // 2,048 dimensions is the most.
        let most = Array(repeating: #"{"doubleValue":0.5}"#, count: 2048).joined(separator: ",")
        #expect(try Self.decode(Self.vectorJSON(most)) == .vector(Array(repeating: 0.5, count: 2048)))
    }

    @Test(arguments: [
        (vectorJSON(#"{"integerValue":"1"}"#), "Vector must only contain values of type 'double'"),
        (vectorJSON(#"{"doubleValue":1},{"stringValue":"a"}"#), "Vector must only contain values of type 'double'"),
        (vectorJSON(""), "Cannot have a zero length vector."),
        (vectorJSON(Array(repeating: #"{"doubleValue":0.5}"#, count: 2049).joined(separator: ",")), "Vectors must be at most 2048 dimensions."),
        (vectorJSON(#"{"doubleValue":1}"#, extra: #","x":{"nullValue":null}"#), "Vector Value map has extraneous entries."),
        (#"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"}}}}"#, "Vector map is missing key 'value'."),
        (#"{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"doubleValue":1}}}}"#, "Vector Value type must be an array."),
        (#"{"mapValue":{"fields":{"__type__":{"integerValue":"1"}}}}"#, "Field __type__ is not a string."),
        (#"{"arrayValue":{"values":[\#(vectorJSON(#"{"doubleValue":1}"#))]}}"#, "Cannot convert a vector value in an array value."),
    ])
    func malformedVectorsAreRefused(_ text: String, _ message: String) {
        #expect(throws: FirestoreError.invalidArgument(message)) { try Self.decode(text) }
    }

    @Test func aVectorIsWrittenBackAsTheTypedMap() throws {
        let json = ValueJSON.encode(.vector([1, -2.5]))
        #expect(json.serialized() == Self.vectorJSON(#"{"doubleValue":1.0},{"doubleValue":-2.5}"#))
        var w = JSONWriter()
        w.value(.vector([1, -2.5]))
        #expect(try JSON.parse(w.bytes) == json)
        #expect(try Self.decode(json.serialized()) == .vector([1, -2.5]))
    }

    /// NaN may stand in a filter's or query vector's vector, never in a stored one (even in a map in an array).
    @Test func writtenDocumentsRefuseNaNAndOtherTypedMaps() throws {
        let nan = try Self.decode(Self.vectorJSON(#"{"doubleValue":"NaN"}"#))
        #expect(nan.firestoreEquals(.vector([.nan])))
        for fields: [ExactString: FirestoreValue] in [["v": nan], ["m": .map(["v": nan])], ["a": .array([.map(["v": nan])])]] {
            #expect(throws: FirestoreError.invalidArgument("Vector cannot contain NaN values.")) { try DocumentFields.validateWritten(fields) }
        }
        #expect(throws: FirestoreError.invalidArgument("Property m contains an invalid nested entity.")) {
            try DocumentFields.validateWritten(["m": .map(["x": .map(["__type__": .string("__other__")])])])
        }
        try DocumentFields.validateWritten(["v": .vector([1, .infinity]), "m": .map(["v": .vector([0])])])
    }

    @Test func aVectorIsOneIndexEntryAndEightBytesADimension() {
        let entries = IndexEntry.entries(of: ["v": .vector([1, 2, 3])])
        #expect(entries == [IndexEntry(field: "v", kind: IndexEntry.valueKind, value: OrderedEncoding.encode(.vector([1, 2, 3])))])
        #expect(DocumentFields.size(of: .vector([1, 2, 3])) == 24)
        #expect(OrderedEncoding.tag(of: .vector([1])) > OrderedEncoding.tagArray)
        #expect(OrderedEncoding.tag(of: .vector([1])) < OrderedEncoding.tagMap)
    }

    @Test func rulesSeeAVectorOfTheirOwn() {
        #expect(RulesConversion.value(.vector([1, 2])) == .vector([1, 2]))
        #expect(RulesConversion.value(.map(["v": .vector([1])])) == .map(RulesConversion.map(["v": .vector([1])])))
    }
}
