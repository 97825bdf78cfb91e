import Testing
@testable import FirestoreEmulator

/// A commit's table of documents by path answers as a dictionary would, below and above the size
/// where it starts indexing, and keeps the order paths were first set.
struct PathTableTests {
    @Test(arguments: [1, 16, 17, 40])
    func answersAsADictionary(count: Int) {
        var table = PathTable<Int?>()
        var reference: [ResourcePath: Int?] = [:]
        let paths = (0..<count).map { ResourcePath(["users", "u\($0 % 3)", "files", "f\($0)"]) }
        for (i, p) in paths.enumerated() {
            let v: Int? = i % 4 == 0 ? nil : i
            table[p] = .some(v)
            reference[p] = .some(v)
        }
        // Overwrite some, including to an absent document (nil inside the optional).
        for p in paths.prefix(5) {
            table[p] = .some(nil)
            reference[p] = .some(nil)
        }
        for p in paths + [ResourcePath(["users", "u0", "files", "missing"]), ResourcePath(["users"])] {
            #expect(table[p] == reference[p], "\(p)")
        }
        #expect(table.entries.map(\.path) == paths)
        table[paths[0]] = nil
        reference[paths[0]] = nil
        #expect(table[paths[0]] == nil)
        #expect(table.entries.count == count - 1)
        for p in paths.dropFirst() { #expect(table[p] == reference[p]) }
    }
}
