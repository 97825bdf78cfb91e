import Foundation
import HearthCore
import Testing
@testable import StorageEmulator

/// objects.list's filters: matchGlob, startOffset/endOffset, includeTrailingDelimiter, versions.
@Suite struct ObjectListingTests {
    let b = StorageHarness.bucket
    static let names = ["a.txt", "b.png", "dir/", "dir/c.txt", "dir/d.png", "dir/sub/e.txt", "dir2/f.txt", "g[1].txt", "x,y.txt"]

    func harness() throws -> StorageHarness {
        let h = try StorageHarness()
        for n in Self.names {
            let encoded = n.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(encoded)", body: [1]).status == 200)
        }
        return h
    }

    func list(_ h: StorageHarness, _ query: String) -> (items: [String], prefixes: [String], status: Int, json: JSON) {
        let r = h.send("GET", "/storage/v1/b/\(b)/o?\(query)")
        return (r.json["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [],
                r.json["prefixes"]?.arrayValue?.compactMap(\.stringValue) ?? [], r.status, r.json)
    }

    static func q(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    @Test(arguments: [
        ("*.txt", ["a.txt", "g[1].txt", "x,y.txt"]),
        ("**.txt", ["a.txt", "dir/c.txt", "dir/sub/e.txt", "dir2/f.txt", "g[1].txt", "x,y.txt"]),
        ("**/*.png", ["b.png", "dir/d.png"]),
        ("dir/**/*.txt", ["dir/c.txt", "dir/sub/e.txt"]),
        ("dir/*", ["dir/", "dir/c.txt", "dir/d.png"]),
        ("?.png", ["b.png"]),
        ("dir?/*", ["dir2/f.txt"]),
        ("[ab].*", ["a.txt", "b.png"]),
        ("[!ab].*", []),
        ("[^a-f]*", ["g[1].txt", "x,y.txt"]),
        ("*.{png,jpg}", ["b.png"]),
        ("**.{p{n,x}g,zzz}", ["b.png", "dir/d.png"]),
        ("g\\[1\\].txt", ["g[1].txt"]),
        ("x,y.txt", ["x,y.txt"]),
    ])
    func matchGlobFiltersNames(glob: String, expected: [String]) throws {
        let h = try harness()
        let r = list(h, "matchGlob=\(Self.q(glob))")
        #expect(r.status == 200)
        #expect(r.items == expected)
    }

    @Test(arguments: [
        ("test/[abc.jpg", "Glob pattern character class has no closing ']' for opening '[' at index 5. Either add a closing ']' or use '\\[' to match a literal '['."),
        ("test/{a,b.jpg", "Glob pattern brace expansion opening '{' at index 5 has no closing '}'. Use '\\{' to match a literal '{'."),
        ("test/[].jpg", "Glob pattern character class at index 5 must have at least one character in it."),
        ("test/a].jpg", "Glob pattern had closing character class ']' at index 6 without any previous opening '['. Either add an opening '[' or use '\\]' to match ']'."),
        ("test/a}.jpg", "Glob pattern brace expansion closing '}' at index 6 has no previous opening '{'. Use '\\}' to match a literal '}'."),
        ("test/[z-a].jpg", "Invalid range 'z-a' in glob pattern character class."),
    ])
    func malformedGlobsAreRefusedWithGCSsMessages(glob: String, message: String) throws {
        let h = try StorageHarness()
        let r = list(h, "matchGlob=\(Self.q(glob))")
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue == message)
        #expect(r.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "invalid")
    }

    @Test func offsetsBoundTheNames() throws {
        let h = try harness()
        #expect(list(h, "startOffset=dir/&endOffset=dir2").items == ["dir/", "dir/c.txt", "dir/d.png", "dir/sub/e.txt"])
        #expect(list(h, "startOffset=g").items == ["g[1].txt", "x,y.txt"])
        #expect(list(h, "endOffset=b").items == ["a.txt"])
        // With a delimiter the prefixes come from the names in range; pages keep the bounds.
        let r = list(h, "delimiter=/&startOffset=b&endOffset=g")
        #expect(r.items == ["b.png"])
        #expect(r.prefixes == ["dir/", "dir2/"])
        let first = list(h, "startOffset=dir/c&maxResults=2")
        #expect(first.items == ["dir/c.txt", "dir/d.png"])
        let token = try #require(first.json["nextPageToken"]?.stringValue)
        #expect(list(h, "startOffset=dir/c&endOffset=dir2&maxResults=2&pageToken=\(token)").items == ["dir/sub/e.txt"])
    }

    @Test func includeTrailingDelimiterListsTheFolderObject() throws {
        let h = try harness()
        let plain = list(h, "delimiter=/")
        #expect(plain.items == ["a.txt", "b.png", "g[1].txt", "x,y.txt"])
        #expect(plain.prefixes == ["dir/", "dir2/"])
        let with = list(h, "delimiter=/&includeTrailingDelimiter=true")
        #expect(with.items == ["a.txt", "b.png", "dir/", "g[1].txt", "x,y.txt"])
        #expect(with.prefixes == ["dir/", "dir2/"])
        #expect(list(h, "delimiter=/&prefix=dir/&includeTrailingDelimiter=true").prefixes == ["dir/sub/"])
    }

    @Test func versionsListsTheLiveGenerations() throws {
        let h = try harness()
        #expect(list(h, "versions=true").items == Self.names)
    }
}
