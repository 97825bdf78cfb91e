import HearthCore
import Testing
@testable import FirestoreEmulator

/// Names and strings differing only in Unicode normalisation stay apart, as the official emulator
/// keeps them (Tests/CompatTests/firestore/differential/unicodecases.py): "é" precomposed (NFC) and
/// decomposed (NFD) are canonically equivalent, so Swift's `String` calls them equal.
struct NormalisationTests {
    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"

    @Test func swiftStringsCallThemEqualExactStringsDoNot() {
        #expect(Self.nfc == Self.nfd)  // why this suite exists
        #expect(ExactString(Self.nfc) != ExactString(Self.nfd))
        #expect(Set([ExactString(Self.nfc), ExactString(Self.nfd)]).count == 2)
        #expect(ExactString.compare(Self.nfd, Self.nfc) < 0)  // "e" (0x65) before 0xC3
        #expect(ExactString("K") != ExactString("\u{212A}"))  // KELVIN SIGN, a singleton equivalent of ASCII K
        #expect(ExactString("abc") == ExactString("abc") && ExactString("") == ExactString(""))
    }

    @Test func aMapHoldsBothNamesThroughEveryEncoding() throws {
        let fields: [ExactString: FirestoreValue] = [
            ExactString(Self.nfc): .integer(1), ExactString(Self.nfd): .integer(2),
            "m": .map([ExactString(Self.nfc): .string(Self.nfc), ExactString(Self.nfd): .string(Self.nfd)]),
        ]
        #expect(fields.count == 3)
        let stored = try StoredValueCodec.decodeFields(StoredValueCodec.encodeFields(fields))
        #expect(stored == fields)
        let json = try ValueJSON.decodeFields(ValueJSON.encodeFields(fields), path: "fields")
        #expect(json == fields)
        #expect(OrderedEncoding.sortedKeys(fields).map(\.string) == [Self.nfd, "m", Self.nfc])
        #expect(FirestoreValue.string(Self.nfc) != .string(Self.nfd))
        #expect(!FirestoreValue.string(Self.nfc).firestoreEquals(.string(Self.nfd)))
    }

    @Test func fieldPathsNameOneSpelling() {
        var fields: [ExactString: FirestoreValue] = [ExactString(Self.nfd): .integer(1)]
        #expect(DocumentFields.value(at: FieldPath([Self.nfc]), in: fields) == nil)
        #expect(DocumentFields.value(at: FieldPath([Self.nfd]), in: fields) == .integer(1))
        DocumentFields.set(.integer(7), at: FieldPath([Self.nfc]), in: &fields)
        #expect(fields == [ExactString(Self.nfd): .integer(1), ExactString(Self.nfc): .integer(7)])
        DocumentFields.remove(at: FieldPath([Self.nfd]), in: &fields)
        #expect(fields == [ExactString(Self.nfc): .integer(7)])
        #expect(FieldPath([Self.nfc]) != FieldPath([Self.nfd]))
        #expect(Set([FieldPath([Self.nfc]), FieldPath([Self.nfd])]).count == 2)
    }

    @Test func documentPathsNameTwoDocuments() {
        let a = ResourcePath(["c", Self.nfc]), b = ResourcePath(["c", Self.nfd])
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
        #expect(a == ResourcePath(["c", Self.nfc]))
        #expect(!ResourcePath(["c", Self.nfc]).isAncestor(of: ResourcePath(["c", Self.nfd, "s", "x"])))
        var table = PathTable<Int>()
        table[a] = 1
        table[b] = 2
        #expect(table[a] == 1 && table[b] == 2 && table.entries.count == 2)
    }
}
