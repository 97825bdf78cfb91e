import HearthCore

/// A database: `projects/{project}/databases/{database}`.
struct DatabaseID: Sendable, Hashable {
    let project: String
    let database: String

    /// `projects/p/databases/d`.
    var name: String { "projects/\(project)/databases/\(database)" }
    /// `projects/p/databases/d/documents`.
    var documentsRoot: String { name + "/documents" }
    /// The key spaces are keyed by.
    var spaceName: String { project + "/" + database }

    /// The full name of a document or collection path.
    ///
    /// Copied piece by piece into the new string's own storage, sized exactly: made for every
    /// document answered (gets, pages, query results). The interpolation, the join and three
    /// concatenations cost as much as a cached get, and nine `+=` into a reserved string still
    /// ~5k instructions a name (docs/benchmarks.md, listbench).
    func name(of path: ResourcePath) -> String {
        var length = 30 + project.utf8.count + database.utf8.count
        for s in path.segments { length += 1 + s.utf8.count }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var n = 0
            func put(_ text: String) {
                var text = text
                text.withUTF8 { bytes in
                    if let from = bytes.baseAddress { (buffer.baseAddress! + n).initialize(from: from, count: bytes.count) }
                    n += bytes.count
                }
            }
            put("projects/")
            put(project)
            put("/databases/")
            put(database)
            put("/documents")
            for s in path.segments {
                buffer[n] = 0x2F
                n += 1
                put(s)
            }
            return n
        }
    }
}

extension DatabaseID {
    /// Refuses a database id no document can be written to, as the official emulator refuses it
    /// (faith34): `.` and `..` (reported in `name`, the document name that carries the id), an id
    /// over 100 bytes, a reserved `__…__` id, and any character but ASCII letters, digits, `.`, `_`
    /// and `-` (`(default)` apart). Reads of such a database find nothing, as there. `dotsOnly`:
    /// only `.` and `..` (a batch of deletes, which the emulator refuses for nothing else).
    func validateForWrite(name: @autoclosure () -> String, dotsOnly: Bool = false) throws(FirestoreError) {
        let utf8 = database.utf8
        if database == "(default)" { return }
        if database == "." || database == ".." {
            throw .invalidArgument("Document name \"\(name())\" contains a database id \"\(database)\" at index \(20 + project.utf8.count).")
        }
        if dotsOnly { return }
        if utf8.count > 100 {
            throw .invalidArgument("The database is longer than 100 bytes.")
        }
        if utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8) {
            throw .invalidArgument("The database \"\(database)\" is reserved.")
        }
        for b in utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                throw .invalidArgument("Illegal string \"\(database)\" in database.")
            }
        }
    }
}

/// A path relative to a database's `documents` root: a document (even segment count) or a
/// collection (odd count); empty is the root itself.
///
/// Equal and hashed by the segments' UTF-8 bytes (`ExactString`): document IDs that differ only in
/// Unicode normalisation name two documents in Firestore, and as `String`s they were one key of
/// every path table and cache (a commit writing both kept one write).
struct ResourcePath: Sendable, Hashable, CustomStringConvertible {
    let segments: [String]

    init(_ segments: [String]) { self.segments = segments }

    static func == (a: ResourcePath, b: ResourcePath) -> Bool { ExactString.equal(a.segments, b.segments) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(segments.count)
        for s in segments { ExactString(s).hash(into: &hasher) }
    }

    static let root = ResourcePath([])

    var isDocument: Bool { !segments.isEmpty && segments.count % 2 == 0 }
    var isCollection: Bool { segments.count % 2 == 1 }
    /// `a/b/c`.
    var string: String { segments.joined(separator: "/") }
    var description: String { string }

    /// The last segment (a document or collection id).
    var lastSegment: String { segments.last ?? "" }
    /// The parent path (a document's collection, a collection's parent document).
    var parent: ResourcePath { ResourcePath(Array(segments.dropLast())) }
    /// The collection id a document belongs to.
    var collectionID: String { segments.count >= 2 ? segments[segments.count - 2] : "" }

    func appending(_ segment: String) -> ResourcePath { ResourcePath(segments + [segment]) }

    /// The order-preserving key (see `OrderedEncoding.key`).
    var key: [UInt8] { OrderedEncoding.key(segments) }

    /// Whether `other` is inside this path.
    func isAncestor(of other: ResourcePath) -> Bool {
        other.segments.count > segments.count && ExactString.equal(Array(other.segments.prefix(segments.count)), segments)
    }

    /// Maximum bytes of one id, and of a whole document name, as Firestore documents.
    static let maxSegmentBytes = 1500
    static let maxNameBytes = 6 * 1024

    /// Validates the path as named in `database`; its full name is built only for an error message.
    func validate(in database: DatabaseID) throws(FirestoreError) {
        // "projects/" + p + "/databases/" + d + "/documents", then "/" + segment for each.
        var length = 30 + database.project.utf8.count + database.database.utf8.count
        for s in segments {
            length += 1 + s.utf8.count
            guard ResourcePath.isPlainValid(s) else { return try validate(fullName: database.name(of: self)) }
        }
        if length > ResourcePath.maxNameBytes { try validate(fullName: database.name(of: self)) }
    }

    /// Whether `s` is an ASCII id that `validateSegment` accepts.
    private static func isPlainValid(_ s: String) -> Bool {
        let utf8 = s.utf8
        guard !utf8.isEmpty, utf8.count <= maxSegmentBytes else { return false }
        // Over the contiguous bytes (see `splitSlashes`).
        var copy = s
        guard copy.withUTF8({ bytes in isASCII(bytes) && !bytes.contains(0x2F) }) else { return false }
        if s == "." || s == ".." { return false }
        return !(utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8))
    }

    /// Validates each segment as a document or collection id, with Firestore's messages (an
    /// empty segment, `.` or `..` is reported at its byte offset in `fullName`; `kind` names the
    /// name in the message for `.` and `..`, as Firestore does).
    func validate(fullName: String, kind: String = "Document name") throws(FirestoreError) {
        if fullName.utf8.count > ResourcePath.maxNameBytes {
            throw .invalidArgument("Document name \"\(fullName)\" is too long: the maximum is \(ResourcePath.maxNameBytes) bytes.")
        }
        var offset = fullName.utf8.count - string.utf8.count
        for (i, s) in segments.enumerated() {
            if s.isEmpty {
                // The emulator's words: an empty last segment is a trailing `/` (right after
                // `documents`, "Omit trailing"), another one lacks the id its place calls for.
                if i == segments.count - 1 {
                    throw .invalidArgument(i == 0 ? "\(kind) \"\(fullName)\" is invalid: Omit trailing \"/\"."
                                                  : "\(kind) \"\(fullName)\" has invalid trailing \"/\".")
                }
                throw .invalidArgument("\(kind) \"\(fullName)\" lacks a \(i % 2 == 0 ? "collection" : "resource") id at index \(offset).")
            }
            if s == "." || s == ".." {
                throw .invalidArgument("\(kind) \"\(fullName)\" contains a \(i % 2 == 0 ? "collection" : "resource") id \"\(s)\" at index \(offset).")
            }
            try ResourcePath.validateSegment(s, fullName: fullName, isCollection: i % 2 == 0)
            offset += s.utf8.count + 1
        }
    }

    static func validateSegment(_ s: String, fullName: String, isCollection: Bool = false) throws(FirestoreError) {
        let kind = isCollection ? "Collection id" : "Resource id"
        if s.isEmpty {
            throw .invalidArgument("Document name \"\(fullName)\" lacks a resource id at index \(fullName.utf8.count).")
        }
        let utf8 = s.utf8
        if utf8.count > maxSegmentBytes {
            // A collection id is the key path element's kind, a document id its name.
            throw .invalidArgument("The key path element \(isCollection ? "kind" : "name") is longer than \(maxSegmentBytes) bytes.")
        }
        if !utf8.contains(where: { $0 >= 0x80 }) {
            // ASCII (every id a client sends, nearly): characters are bytes, checked without
            // Character iteration; the general checks below say the same.
            if utf8.contains(0x2F) {
                throw .invalidArgument("\(kind) \"\(s)\" is invalid because it contains \"/\".")
            }
            if s == "." || s == ".." {
                throw .invalidArgument("\(kind) \"\(s)\" is invalid because it is reserved.")
            }
            if utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8) {
                // `__id<N>__` names a numeric (Datastore) id, which Firestore accepts as a document
                // id: N a non-zero 64-bit integer written canonically (the official emulator's rule;
                // as a collection id it is reserved like any other `__…__`).
                switch isCollection ? nil : Self.numericID(s) {
                case true?: return
                case false?: throw .invalidArgument("\(kind) \"\(s)\" is invalid because it is not a 64 bit integer.")
                case nil: throw .invalidArgument("\(kind) \"\(s)\" is invalid because it is reserved.")
                }
            }
            return
        }
        if s.contains("/") {
            throw .invalidArgument("\(kind) \"\(s)\" is invalid because it contains \"/\".")
        }
        if s == "." || s == ".." || (s.count >= 4 && s.hasPrefix("__") && s.hasSuffix("__")) {
            throw .invalidArgument("\(kind) \"\(s)\" is invalid because it is reserved.")
        }
    }

    /// For `__id<digits>__`: true when the digits (optionally negative, no leading zero, not
    /// zero) fit a 64-bit integer, false when they do not; nil for any other shape.
    static func numericID<S: StringProtocol>(_ s: S) -> Bool? {
        numericIDParse(s).map { $0 != nil }
    }

    /// The number a numeric id `__id<N>__` names (N canonical, non-zero, 64-bit: what
    /// `numericID` accepts), nil for every other id. Runs for every segment of every key made, so
    /// ids that do not start with `_` (nearly all) are turned away on their first byte.
    static func numericIDValue<S: StringProtocol>(_ s: S) -> Int64? {
        guard s.utf8.first == 0x5F, let parsed = numericIDParse(s) else { return nil }
        return parsed
    }

    /// For `__id<digits>__` (the shape `numericID` describes): the digits' value, or nil inside when
    /// they do not fit 64 bits; nil for any other shape. Both questions above, parsed once.
    private static func numericIDParse<S: StringProtocol>(_ s: S) -> Int64?? {
        guard s.hasPrefix("__id"), s.hasSuffix("__"), s.utf8.count > 6 else { return nil }
        let inner = s.dropFirst(4).dropLast(2)
        let digits = inner.hasPrefix("-") ? inner.dropFirst() : inner[...]
        guard let first = digits.first, first != "0", digits.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        return .some(Int64(inner))
    }

    /// Parses `projects/p/databases/d/documents[/…]` into a database and a relative path; `kind`
    /// names the name in messages ("Document name", "Resource name" for reference values).
    static func parseName(_ name: String, kind: String = "Document name") throws(FirestoreError) -> (DatabaseID, ResourcePath) {
        if let plain = plainName(name) { return plain }
        return try parseNameInPieces(name, kind: kind)
    }

    /// `parseName` the general way: split into pieces, each checked against the pattern.
    static func parseNameInPieces(_ name: String, kind: String = "Document name") throws(FirestoreError) -> (DatabaseID, ResourcePath) {
        let parts = splitSlashes(name)
        try checkPattern(name, parts, pieces: 5, kind: kind)
        let path = ResourcePath(Array(parts.dropFirst(5)))
        // Plain ASCII ids within the limits pass every check of `validate(fullName:)`, which
        // (joining the path to find offsets) is needed only to word an error.
        if name.utf8.count > ResourcePath.maxNameBytes || !path.segments.allSatisfy(ResourcePath.isPlainValid) {
            try path.validate(fullName: name, kind: kind)
        }
        return (DatabaseID(project: parts[1], database: parts[3]), path)
    }

    /// Checks the first `pieces` pieces of `name` (split at `/` into `parts`) against Firestore's
    /// pattern `projects/{project}/databases/{database}/documents`, reporting the first place the
    /// name departs from it as a byte offset, in the official emulator's words (faith34): a piece
    /// that only starts with the literal lacks the `/` after it, an empty id is the project's or
    /// the database's, an empty last piece is a trailing `/`. With `pieces` 4 (a database name), a
    /// longer name has extra characters.
    static func checkPattern(_ name: String, _ parts: [String], pieces: Int, kind: String) throws(FirestoreError) {
        var offset = 0
        for (i, expected) in ["projects", "", "databases", "", "documents"].prefix(pieces).enumerated() {
            guard i < parts.count else {
                throw .invalidArgument("\(kind) \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
            }
            let part = parts[i]
            if part.isEmpty, i > 0, i == parts.count - 1 {
                throw .invalidArgument("\(kind) \"\(name)\" has invalid trailing \"/\".")
            }
            if expected.isEmpty, part.isEmpty {
                throw .invalidArgument("\(kind) \"\(name)\" lacks a \(i == 1 ? "project" : "database") id at index \(offset).")
            }
            if !expected.isEmpty, part != expected {
                if part.hasPrefix(expected) {
                    throw .invalidArgument("\(kind) \"\(name)\" lacks \"/\" at index \(offset + expected.utf8.count).")
                }
                throw .invalidArgument("\(kind) \"\(name)\" lacks \"\(expected)\" at index \(offset).")
            }
            offset += part.utf8.count + 1
        }
        if parts.count > pieces, pieces == 4 {
            if parts.count == 5, parts[4].isEmpty {
                throw .invalidArgument("\(kind) \"\(name)\" has invalid trailing \"/\".")
            }
            throw .invalidArgument("\(kind) \"\(name)\" has extra characters at index \(offset - 1).")
        }
    }

    /// `parseName` of the names clients send — ASCII, within the limits, `projects/{p}/databases/{d}/documents`
    /// and ids that each pass `isPlainValid` — read from the bytes in one pass, without the pieces,
    /// the pattern and the copies the general path makes (two names per REST transaction, ~6k
    /// instructions each, docs/benchmarks.md, txn26); nil for any other name, which the general
    /// path parses (and words any error for). Gives exactly what the general path gives.
    static func plainName(_ name: String) -> (DatabaseID, ResourcePath)? {
        guard name.utf8.count <= maxNameBytes else { return nil }
        var copy = name
        return copy.withUTF8 { b -> (DatabaseID, ResourcePath)? in
            guard isASCII(b) else { return nil }
            func literal(_ word: StaticString, at i: Int) -> Bool {
                let n = word.utf8CodeUnitCount
                guard i + n <= b.count else { return false }
                let w = word.utf8Start
                for k in 0..<n where b[i + k] != w[k] { return false }
                return true
            }
            /// The end of the piece starting at `i` (the next `/`, or the end).
            func end(from i: Int) -> Int {
                var j = i
                while j < b.count, b[j] != 0x2F { j += 1 }
                return j
            }
            func text(_ r: Range<Int>) -> String { SmallASCII.string(UnsafeBufferPointer(rebasing: b[r])) }
            guard literal("projects/", at: 0) else { return nil }
            let projectEnd = end(from: 9)
            guard projectEnd > 9, literal("/databases/", at: projectEnd) else { return nil }
            let databaseStart = projectEnd + 11
            let databaseEnd = end(from: databaseStart)
            guard databaseEnd > databaseStart, literal("/documents", at: databaseEnd) else { return nil }
            var i = databaseEnd + 10
            var segments: [String] = []
            if i < b.count {
                guard b[i] == 0x2F else { return nil }
                segments.reserveCapacity(4)
                repeat {
                    let start = i + 1
                    let stop = end(from: start)
                    // `isPlainValid` on the bytes (ASCII, no `/` by construction): not empty, not too long,
                    // not `.` or `..`, not `__…__`.
                    let n = stop - start
                    guard n > 0, n <= maxSegmentBytes else { return nil }
                    if b[start] == 0x2E && (n == 1 || (n == 2 && b[start + 1] == 0x2E)) { return nil }
                    if n >= 4 && b[start] == 0x5F && b[start + 1] == 0x5F && b[stop - 1] == 0x5F && b[stop - 2] == 0x5F { return nil }
                    segments.append(text(start..<stop))
                    i = stop
                } while i < b.count
            }
            return (DatabaseID(project: text(9..<projectEnd), database: text(databaseStart..<databaseEnd)), ResourcePath(segments))
        }
    }

    /// `name` split at every `/` (empty pieces kept), byte by byte when it is ASCII.
    static func splitSlashes(_ name: String) -> [String] {
        // Pieces made straight from the bytes (String(Substring) goes through the general append).
        // The ASCII check runs over the same contiguous bytes: through `utf8.contains(where:)` it
        // stepped string indices, ~30 instructions a byte, more than the split itself.
        var copy = name
        let split: [String]? = copy.withUTF8 { bytes in
            // A non-ASCII byte could start a combining mark that joins a `/` into another Character,
            // which splitting Characters would not split at.
            guard ResourcePath.isASCII(bytes) else { return nil }
            var parts: [String] = []
            parts.reserveCapacity(10)
            var start = 0
            for i in 0..<bytes.count where bytes[i] == 0x2F {
                parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
                start = i + 1
            }
            parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
            return parts
        }
        return split ?? name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether every byte is ASCII, over contiguous bytes (a tight loop, unlike a `UTF8View` walk).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for b in bytes { any |= b }
        return any < 0x80
    }

    /// Parses a full document name, insisting it names a document of `database`.
    static func parseDocumentName(_ name: String, in database: DatabaseID) throws(FirestoreError) -> ResourcePath {
        let (db, path) = try parseAnyDocumentName(name)
        guard db == database else {
            throw .invalidArgument("Document \"\(name)\" is not in database \"\(database.name)\".")
        }
        return path
    }

    /// Parses a full document name of any database (Firestore acts on the database a write or a
    /// batch read names, whatever the request's URL says).
    static func parseAnyDocumentName(_ name: String) throws(FirestoreError) -> (DatabaseID, ResourcePath) {
        let (db, path) = try parseName(name)
        guard path.isDocument else {
            if path.segments.isEmpty {
                throw .invalidArgument("Document name \"\(name)\" is invalid: Omit \"/documents\" when referencing a database (except as the parent of a document).")
            }
            throw .invalidArgument("Document name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
        }
        return (db, path)
    }
}
