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
