import Testing
@testable import HearthClient

@Suite struct FieldPathTests {
    @Test(arguments: [
        (["a"], "a"), (["a", "b_c"], "a.b_c"), (["_x9"], "_x9"), (["9lives"], "`9lives`"), (["with space"], "`with space`"),
        (["a.b"], "`a.b`"), (["back`tick"], "`back\\`tick`"), (["back\\slash"], "`back\\\\slash`"), (["é"], "`é`"), ([""], "``"),
    ])
    func escaping(_ segments: [String], _ expected: String) {
        #expect(FieldPath(segments).escaped == expected)
    }

    @Test func dottedSplits() {
        #expect(FieldPath(dotted: "a.b.c").segments == ["a", "b", "c"])
    }
}
