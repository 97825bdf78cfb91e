import Testing
import HearthCore

@Suite struct JSONTests {
    @Test func keepsMemberOrderAndIntegerPrecision() throws {
        let v = try JSON.parse(#"{"z":1,"a":[true,null,-9223372036854775808,1.5e3],"m":{"k":"v\u00e9\ud83d\ude00"}}"#)
        #expect(v.objectValue?.keys == ["z", "a", "m"])
        #expect(v["a"]?[2] == .int(Int64.min))
        #expect(v["a"]?[3] == .double(1500))
        #expect(v["m"]?["k"]?.stringValue == "vé😀")
        #expect(v.serialized() == #"{"z":1,"a":[true,null,-9223372036854775808,1500.0],"m":{"k":"vé😀"}}"#)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "tru", "01", "\"\\x\"", "\"\u{01}\"", "[1] x", "\"\\ud800\"", "1.", "-"])
    func rejectsMalformed(text: String) {
        #expect(throws: JSONParseError.self) { try JSON.parse(text) }
    }

    /// Strings without escapes take the ASCII fast path or UTF-8 validation; both must give what
    /// the bytes say, and bytes that are not UTF-8 the one error Firestore's REST answer quotes.
    @Test(arguments: [
        ([0x22, 0x61, 0x62, 0x22], "ab"),
        ([0x22, 0x22], ""),
        ([0x22, 0x63, 0x61, 0x66, 0xC3, 0xA9, 0x22], "café"),
        ([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x7E, 0x22], "😀~"),
    ] as [([UInt8], String)])
    func decodesUnescapedStrings(bytes: [UInt8], expected: String) throws {
        #expect(try JSON.parse(bytes).stringValue == expected)
    }

    @Test(arguments: [[0x22, 0x61, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] as [[UInt8]])
    func rejectsInvalidUTF8(bytes: [UInt8]) {
        do {
            _ = try JSON.parse(bytes)
            Issue.record("parsed \(bytes)")
        } catch {
            #expect(error.reason == "Invalid UTF-8 in string")
            #expect(error.offset == bytes.count)
        }
    }

    /// A number past a double's range read as ±infinity and reached every service so: refused at
    /// the number, in the words of Google's JSON parser. Underflow (`1e-400`) reads as 0, as there.
    @Test(arguments: [("1e400", 0), ("-1e999", 0), ("[1, 2e308]", 4), (#"{"a": {"b": -1.8e308}}"#, 12),
                      (String(repeating: "9", count: 400), 0), ("[0, -" + String(repeating: "9", count: 310) + ".5]", 4)])
    func rejectsNumbersPastADoublesRange(text: String, offset: Int) {
        do {
            let parsed = try JSON.parse(text)
            Issue.record("parsed as \(parsed)")
        } catch {
            #expect(error.isNumberOutOfRange)
            #expect(error.reason == "Number exceeds the range of double.")
            #expect(error.offset == offset)
        }
    }

    @Test func readsTheEdgesOfADoublesRange() throws {
        #expect(try JSON.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try JSON.parse("-5e-324") == .double(-5e-324))
        #expect(try JSON.parse("1e-400") == .double(0))
        #expect(try JSON.parse("99999999999999999999") == .double(1e20))
        // Malformed text stays malformed, whatever number it holds.
        do { _ = try JSON.parse("[1e400") } catch { #expect(error.isNumberOutOfRange) }
        do { _ = try JSON.parse("[1, 1e") } catch { #expect(!error.isNumberOutOfRange) }
    }

    @Test func rejectsDeepNesting() {
        let deep = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(throws: JSONParseError.self) { try JSON.parse(deep) }
    }

    @Test func escapesControlCharacters() {
        #expect(JSON.string("a\"b\\c\n\u{01}").serialized() == #""a\"b\\c\n\u0001""#)
    }

    @Test func objectSubscriptReplacesAndRemoves() {
        var o: JSONObject = ["a": .int(1), "b": .int(2)]
        o["a"] = .int(3)
        o["b"] = nil
        o["c"] = .null
        #expect(o.keys == ["a", "c"])
        #expect(o["a"] == .int(3))
    }
}
