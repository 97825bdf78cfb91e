import Testing
@testable import FirestoreEmulator

/// Names split and ids validate the same whether the byte-level path or the general one reads them.
struct ResourcePathTests {
    @Test(arguments: [
        "projects/p/databases/(default)/documents/users/u1",
        "projects/p/databases/d/documents",
        "a//b/",
        "/",
        "",
        "caf\u{E9}/x",
        "a/\u{301}b",
    ])
    func splitAgreesWithCharacterSplit(name: String) {
        #expect(ResourcePath.splitSlashes(name) == name.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    @Test(arguments: [
        ("users", nil),
        ("", "lacks a resource id"),
        ("a/b", #"contains "/""#),
        (".", "reserved"),
        ("..", "reserved"),
        ("...", nil),
        ("__x__", "reserved"),
        ("____", "reserved"),
        ("___", nil),
        ("__x_", nil),
        ("__\u{E9}__", "reserved"),
        ("\u{E9}/", #"contains "/""#),
        (String(repeating: "x", count: 1501), "longer than 1500 bytes"),
    ] as [(String, String?)])
    func segmentsValidate(segment: String, problem: String?) {
        do {
            try ResourcePath.validateSegment(segment, fullName: "n")
            #expect(problem == nil, "\(segment) passed")
        } catch {
            #expect(problem.map { error.message.contains($0) } == true, "\(segment): \(error.message)")
        }
    }

    /// `.` and `..` in a name are reported where they stand, as the official emulator does.
    @Test(arguments: [
        ("projects/p/databases/d/documents/c/.", "Document name", #"Document name "projects/p/databases/d/documents/c/." contains a resource id "." at index 35."#),
        ("projects/p/databases/d/documents/../x", "Document name", #"Document name "projects/p/databases/d/documents/../x" contains a collection id ".." at index 33."#),
        ("projects/p/databases/d/documents/c/.", "Resource name", #"Resource name "projects/p/databases/d/documents/c/." contains a resource id "." at index 35."#),
    ])
    func dotSegmentsInNames(name: String, kind: String, message: String) {
        do {
            _ = try ResourcePath.parseName(name, kind: kind)
            Issue.record("\(name) passed")
        } catch {
            #expect(error.message == message)
        }
    }

    /// Names that depart from the pattern, worded as the official emulator words them (faith34).
    @Test(arguments: [
        ("projects//databases/d/documents/c/d", "Document name", #"Document name "projects//databases/d/documents/c/d" lacks a project id at index 9."#),
        ("projects/p/databases//documents/c/d", "Document name", #"Document name "projects/p/databases//documents/c/d" lacks a database id at index 21."#),
        ("projects/p/databases/d/documents/c/e/", "Document name", #"Document name "projects/p/databases/d/documents/c/e/" has invalid trailing "/"."#),
        ("projects/p/databases/d/documents/", "Resource name", #"Resource name "projects/p/databases/d/documents/" is invalid: Omit trailing "/"."#),
        ("projects/p/databases/d/", "Document name", #"Document name "projects/p/databases/d/" has invalid trailing "/"."#),
        ("projects/p/databases/d/documents//c/d", "Document name", #"Document name "projects/p/databases/d/documents//c/d" lacks a collection id at index 33."#),
        ("projects/p/databases/d/documents/c//d", "Document name", #"Document name "projects/p/databases/d/documents/c//d" lacks a resource id at index 35."#),
        ("projects/p/databases/d/documentsx/c/d", "Document name", #"Document name "projects/p/databases/d/documentsx/c/d" lacks "/" at index 32."#),
        ("projects/p/databases/d/docs/c/d", "Document name", #"Document name "projects/p/databases/d/docs/c/d" lacks "documents" at index 23."#),
        ("projects/p/databases/d/documents/\(String(repeating: "k", count: 1501))/d", "Document name", "The key path element kind is longer than 1500 bytes."),
        ("projects/p/databases/d/documents/c/\(String(repeating: "k", count: 1501))", "Document name", "The key path element name is longer than 1500 bytes."),
    ])
    func namesDepartingFromThePattern(name: String, kind: String, message: String) {
        do {
            _ = try ResourcePath.parseName(name, kind: kind)
            Issue.record("\(name) passed")
        } catch {
            #expect(error.message == message)
        }
    }

    @Test func aDocumentNameOfTheDatabaseItselfIsToldToOmitDocuments() {
        do {
            _ = try ResourcePath.parseAnyDocumentName("projects/p/databases/d/documents")
            Issue.record("passed")
        } catch {
            #expect(error.message == #"Document name "projects/p/databases/d/documents" is invalid: Omit "/documents" when referencing a database (except as the parent of a document)."#)
        }
    }

    /// A database name (gRPC's `database` field) is the pattern's first four pieces and no more.
    @Test(arguments: [
        ("projects/p/databases/(default)", nil),
        ("", #"Database name "" lacks "projects" at index 0."#),
        ("projects/x", #"Database name "projects/x" lacks "/" at index 10."#),
        ("projects/p/databases/", #"Database name "projects/p/databases/" has invalid trailing "/"."#),
        ("projects/p/databases/(default)/", #"Database name "projects/p/databases/(default)/" has invalid trailing "/"."#),
        ("projects/p/databases/(default)/documents", #"Database name "projects/p/databases/(default)/documents" has extra characters at index 30."#),
    ] as [(String, String?)])
    func databaseNames(name: String, message: String?) {
        do {
            try ResourcePath.checkPattern(name, ResourcePath.splitSlashes(name), pieces: 4, kind: "Database name")
            #expect(message == nil)
        } catch {
            #expect(error.message == message)
        }
    }

    /// gRPC's `database` and `parent` fields are checked before they become REST paths (a
    /// malformed one was a route miss: NOT_FOUND "HTTP 404"), in the emulator's words.
    @Test(arguments: [
        ("database", "projects/p/databases/(default)", nil),
        ("database", "projects/p", #"Database name "projects/p" lacks "/" at index 10."#),
        ("parent", "projects/p/databases/(default)/documents", nil),
        ("parent", "projects/p/databases/(default)/documents/c/d", nil),
        ("parent", "", #"Document parent name "" lacks "projects" at index 0."#),
        ("parent", "projects/p/databases/(default)", #"Document parent name "projects/p/databases/(default)" lacks "/" at index 30."#),
        ("parent", "projects/p/databases/(default)/documents/c", #"Document parent name "projects/p/databases/(default)/documents/c" lacks "/" at index 42."#),
        ("parent", "projects/p/databases/(default)/documents/", #"Document parent name "projects/p/databases/(default)/documents/" is invalid: Omit trailing "/"."#),
        ("parent", "projects/p/databases/(default)/documents//d", #"Document parent name "projects/p/databases/(default)/documents//d" lacks a collection id at index 41."#),
    ] as [(String, String, String?)])
    func grpcResourceFields(field: String, name: String, message: String?) {
        do {
            try RESTBridge.checkResourceName(name, field: field)
            #expect(message == nil)
        } catch {
            #expect(error.message == message)
        }
    }

    /// Database ids a document can be written to, as the official emulator allows them (faith34).
    @Test(arguments: [
        ("(default)", nil),
        ("other", nil),
        ("Z9._-", nil),
        ("a..b", nil),
        (String(repeating: "a", count: 100), nil),
        (String(repeating: "a", count: 101), "The database is longer than 100 bytes."),
        ("..", #"Document name "projects/p/databases/../documents/c/d" contains a database id ".." at index 21."#),
        ("__x__", #"The database "__x__" is reserved."#),
        ("x y", #"Illegal string "x y" in database."#),
        ("(other)", #"Illegal string "(other)" in database."#),
        ("caf\u{E9}", "Illegal string \"caf\u{E9}\" in database."),
    ] as [(String, String?)])
    func databaseIDsForWrites(database: String, message: String?) {
        let db = DatabaseID(project: "p", database: database)
        do {
            try db.validateForWrite(name: db.name(of: ResourcePath(["c", "d"])))
            #expect(message == nil)
        } catch {
            #expect(error.message == message)
        }
    }

    static let paths: [[String]] = [
        ["users", "u1"],
        [],
        ["a", "", "b"],
        ["__x__", "y"],
        ["caf\u{E9}", "x\u{2028}y", "q\"uote"],
        ["a/b"],
        ["c", ".."],
        [".", "x"],
        [String(repeating: "x", count: 1501)],
        Array(repeating: String(repeating: "y", count: 1000), count: 7),
    ]

    /// The same verdict and message as validating the built name.
    @Test(arguments: paths)
    func validatesInADatabaseAsByName(segments: [String]) {
        let db = DatabaseID(project: "p", database: "(default)")
        let path = ResourcePath(segments)
        func outcome(_ body: () throws(FirestoreError) -> Void) -> String? {
            do { try body(); return nil } catch { return error.message }
        }
        let inDatabase = outcome { () throws(FirestoreError) in try path.validate(in: db) }
        let byName = outcome { () throws(FirestoreError) in try path.validate(fullName: db.name(of: path)) }
        #expect(inDatabase == byName)
    }

    /// `parseName` accepts, refuses and words its refusal as splitting the name and validating
    /// every segment against it does (its plain-id shortcut skips only that validation).
    @Test(arguments: paths + [["users", "u1", "files", "f-\(String(repeating: "z", count: 1400))"],
                              ["users", "__id7__"], ["users", "__id0__"], ["a", ".."],
                              Array(repeating: String(repeating: "w", count: 900), count: 8)])
    func parsesNamesAsValidatingThem(segments: [String]) {
        let db = DatabaseID(project: "p", database: "(default)")
        let name = db.name(of: ResourcePath(segments))
        func outcome(_ body: () throws(FirestoreError) -> [String]) -> String {
            do { return try body().joined(separator: "|") } catch { return "error: " + error.message }
        }
        let parsed = outcome { () throws(FirestoreError) in try ResourcePath.parseName(name).1.segments }
        let reference = outcome { () throws(FirestoreError) in
            let path = ResourcePath(Array(ResourcePath.splitSlashes(name).dropFirst(5)))
            try path.validate(fullName: name)
            return path.segments
        }
        #expect(parsed == reference)
    }

    /// A document's name written piece by piece is the built name written as one string.
    @Test(arguments: paths)
    func namesWriteAsBuilt(segments: [String]) {
        let db = DatabaseID(project: "p\"x", database: "(default)")
        let path = ResourcePath(segments)
        var pieces = JSONWriter()
        pieces.name(db, path)
        var whole = JSONWriter()
        whole.string(db.name(of: path))
        #expect(pieces.bytes == whole.bytes)
    }

    /// `splitSlashes` splits as splitting the name's Characters at "/" does, whether it takes the
    /// byte path (ASCII) or not: a combining mark after a `/` joins it into another Character.
    @Test(arguments: ["projects/p/databases/(default)/documents/users/u1/files/f1", "", "/", "a//b/", "caf\u{E9}/x",
                      "a/\u{301}b/c", "x/\u{7F}/y", "\u{80}", String(repeating: "ab/", count: 200) + "\u{1F600}"])
    func splitsAsCharactersDo(name: String) {
        #expect(ResourcePath.splitSlashes(name) == name.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    @Test func asciiIsEveryByteBelow0x80() {
        for bytes in [[], [0x00, 0x7F, 0x2F], [0x80], [0x41, 0xC3, 0xA9], Array(repeating: 0x61, count: 999) + [0xFF]] as [[UInt8]] {
            #expect(bytes.withUnsafeBufferPointer { ResourcePath.isASCII($0) } == bytes.allSatisfy { $0 < 0x80 })
        }
    }

    /// A numeric id is a document id only: as a collection id it is reserved, as the official
    /// emulator answers ("Collection id \"__id3__\" is invalid because it is reserved.").
    @Test(arguments: [["__id7__", "x"], ["c", "d", "__id-2__", "x"], ["c", "d", "__id3__"]])
    func numericIDsAreReservedAsCollectionIDs(segments: [String]) {
        let db = DatabaseID(project: "p", database: "(default)")
        let id = segments[(segments.count - 1) / 2 * 2]
        #expect(throws: FirestoreError.invalidArgument("Collection id \"\(id)\" is invalid because it is reserved.")) {
            try ResourcePath.parseName(db.name(of: ResourcePath(segments)))
        }
        #expect(throws: Never.self) { try ResourcePath.parseName(db.name(of: ResourcePath(["c", "__id3__"]))) }
    }

    /// The one-pass reading of plain names gives what the general split gives, and leaves every
    /// name it does not take to it: the pattern's pieces (missing, empty, misspelt), ids that are
    /// empty, `.`, `..`, `__…__`, 1,500 and 1,501 bytes, non-ASCII names, and names over the limit.
    @Test func plainNamesParseAsTheGeneralPathParsesThem() {
        let root = "projects/p/databases/(default)/documents"
        var names = [
            root, root + "/", root + "/c", root + "/c/d", root + "/users/u1/files/f-w0", root + "//d", root + "/c//d",
            root + "/c/.", root + "/c/..", root + "/c/...", root + "/c/.x", root + "/__x__/d", root + "/c/__x__", root + "/c/___",
            root + "/c/__x_", root + "/c/_x__", root + "/c/____", root + "/c/d/", root + "x/c/d", root + "/c/d\u{E9}",
            root + "/c/" + String(repeating: "x", count: 1500), root + "/c/" + String(repeating: "x", count: 1501),
            root + "/c/" + String(repeating: "y/x", count: 1000), root + "/" + String(repeating: "c/d/", count: 1600) + "c/d",
            "projects/p/databases/d/documents/c/d", "projects//databases/d/documents/c/d", "projects/p/databases//documents/c/d",
            "projects/p/databases/d/document/c/d", "projects/p/database/d/documents/c/d", "project/p/databases/d/documents/c/d",
            "projects/p/databases/d", "projects/p/databases/d/", "projects/p", "projects/", "projects", "", "/",
            "projects/p/x/databases/d/documents/c/d", "projects/p/databases/d/x/documents/c/d",
            "projects/p\u{E9}/databases/d/documents/c/d", "projects/p/databases/d/documents/c/d/e/f/g/h",
        ]
        names += names.map { $0 + "/more" }
        for name in names {
            let general: Result<(DatabaseID, ResourcePath), FirestoreError> = Result { () throws(FirestoreError) in
                try ResourcePath.parseNameInPieces(name)
            }
            if let plain = ResourcePath.plainName(name) {
                guard case .success(let g) = general else {
                    Issue.record("\(name): taken by the plain reading, refused by the general one")
                    continue
                }
                #expect(plain.0 == g.0 && plain.1 == g.1, "\(name)")
            }
            switch (Result { () throws(FirestoreError) in try ResourcePath.parseName(name) }, general) {
            case (.success(let a), .success(let b)): #expect(a.0 == b.0 && a.1 == b.1, "\(name)")
            case (.failure(let a), .failure(let b)): #expect(a.message == b.message, "\(name)")
            default: Issue.record("\(name): parseName and the general path disagree")
            }
        }
        #expect(ResourcePath.plainName(root + "/users/u1/files/f-w0") != nil)
    }
}
