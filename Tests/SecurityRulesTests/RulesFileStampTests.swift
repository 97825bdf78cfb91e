import Foundation
import Testing
import SecurityRules

/// `RulesFileStamp` reads what the rules watchers compared before through `FileManager`: the
/// modification time and size, of a symbolic link itself.
struct RulesFileStampTests {
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("filestamp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The stamp as `attributesOfItem` gives it.
    static func foundation(_ path: String) -> (Date, Int)? {
        guard let a = try? FileManager.default.attributesOfItem(atPath: path),
              let modified = a[.modificationDate] as? Date else { return nil }
        return (modified, (a[.size] as? NSNumber)?.intValue ?? -1)
    }

    static func agree(_ path: String) throws {
        let stamp = try #require(RulesFileStamp.of(path))
        let (modified, size) = try #require(foundation(path))
        #expect(stamp.size == size)
        let seconds = Double(stamp.seconds) + Double(stamp.nanoseconds) / 1e9
        #expect(abs(seconds - modified.timeIntervalSince1970) < 1e-5)
    }

    @Test func aFileAndALinkAsFileManagerSeesThem() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("firestore.rules").path
        try Data("rules_version = '2';".utf8).write(to: URL(fileURLWithPath: file))
        try Self.agree(file)
        let link = dir.appendingPathComponent("link.rules").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        try Self.agree(link)
        // The link's own stamp (its size is its target's path length), not the file's.
        #expect(RulesFileStamp.of(link)?.size == file.utf8.count)
    }

    @Test func anEditChangesTheStamp() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("r").path
        try Data("a".utf8).write(to: URL(fileURLWithPath: file))
        let before = try #require(RulesFileStamp.of(file))
        #expect(RulesFileStamp.of(file) == before)
        try Data("ab".utf8).write(to: URL(fileURLWithPath: file))
        #expect(RulesFileStamp.of(file) != before)
        // The same size with a new time is a change too.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: file)
        let old = try #require(RulesFileStamp.of(file))
        #expect(old.seconds == 1_000_000 && old.size == 2)
    }

    @Test func aMissingFileHasNoStamp() {
        #expect(RulesFileStamp.of("/nonexistent/hearth-\(UUID().uuidString)") == nil)
    }
}
