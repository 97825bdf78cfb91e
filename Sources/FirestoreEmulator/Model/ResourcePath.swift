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
    func name(of path: ResourcePath) -> String {
        path.segments.isEmpty ? documentsRoot : documentsRoot + "/" + path.string
    }
}

/// A path relative to a database's `documents` root: a document (even segment count) or a
/// collection (odd count); empty is the root itself.
struct ResourcePath: Sendable, Hashable, CustomStringConvertible {
    let segments: [String]

    init(_ segments: [String]) { self.segments = segments }

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
        other.segments.count > segments.count && Array(other.segments.prefix(segments.count)) == segments
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
        guard !utf8.isEmpty, utf8.count <= maxSegmentBytes, !utf8.contains(where: { $0 >= 0x80 || $0 == 0x2F }) else { return false }
        if s == "." || s == ".." { return false }
        return !(utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8))
    }

    /// Validates each segment as a document or collection id.
    func validate(fullName: String) throws(FirestoreError) {
        if fullName.utf8.count > ResourcePath.maxNameBytes {
            throw .invalidArgument("Document name \"\(fullName)\" is too long: the maximum is \(ResourcePath.maxNameBytes) bytes.")
        }
        for s in segments {
            try ResourcePath.validateSegment(s, fullName: fullName)
        }
    }

    static func validateSegment(_ s: String, fullName: String) throws(FirestoreError) {
        if s.isEmpty {
            throw .invalidArgument("Resource name \"\(fullName)\" has an empty path segment.")
        }
        let utf8 = s.utf8
        if utf8.count > maxSegmentBytes {
            throw .invalidArgument("Resource id \"\(s.prefix(64))…\" is too long: the maximum is \(maxSegmentBytes) bytes.")
        }
        if !utf8.contains(where: { $0 >= 0x80 }) {
            // ASCII (every id a client sends, nearly): characters are bytes, checked without
            // Character iteration; the general checks below say the same.
            if utf8.contains(0x2F) {
                throw .invalidArgument("Resource id \"\(s)\" is invalid because it contains '/'.")
            }
            if s == "." || s == ".." {
                throw .invalidArgument("Resource id \"\(s)\" is invalid because it is \".\" or \"..\".")
            }
            if utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8) {
                // `__id<N>__` names a numeric (Datastore) id, which Firestore accepts: N a
                // non-zero 64-bit integer written canonically (the official emulator's rule).
                switch Self.numericID(s) {
                case true?: return
                case false?: throw .invalidArgument("Resource id \"\(s)\" is invalid because it is not a 64 bit integer.")
                case nil: throw .invalidArgument("Resource id \"\(s)\" is invalid because it is reserved.")
                }
            }
            return
        }
        if s.contains("/") {
            throw .invalidArgument("Resource id \"\(s)\" is invalid because it contains '/'.")
        }
        if s == "." || s == ".." {
            throw .invalidArgument("Resource id \"\(s)\" is invalid because it is \".\" or \"..\".")
        }
        if s.count >= 4 && s.hasPrefix("__") && s.hasSuffix("__") {
            throw .invalidArgument("Resource id \"\(s)\" is invalid because it is reserved.")
        }
    }

    /// For `__id<digits>__`: true when the digits (optionally negative, no leading zero, not
    /// zero) fit a 64-bit integer, false when they do not; nil for any other shape.
    static func numericID<S: StringProtocol>(_ s: S) -> Bool? {
        guard s.hasPrefix("__id"), s.hasSuffix("__"), s.utf8.count > 6 else { return nil }
        let inner = s.dropFirst(4).dropLast(2)
        let digits = inner.hasPrefix("-") ? inner.dropFirst() : inner[...]
        guard let first = digits.first, first != "0", digits.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        return Int64(inner) != nil
    }

    /// Parses `projects/p/databases/d/documents[/…]` into a database and a relative path.
    static func parseName(_ name: String) throws(FirestoreError) -> (DatabaseID, ResourcePath) {
        let parts = splitSlashes(name)
        guard parts.count >= 5, parts[0] == "projects", !parts[1].isEmpty, parts[2] == "databases", !parts[3].isEmpty,
              parts[4] == "documents"
        else {
            throw .invalidArgument("Invalid resource name: \"\(name)\"; it must look like \"projects/{project_id}/databases/{database_id}/documents/{document_path}\".")
        }
        let path = ResourcePath(Array(parts.dropFirst(5)))
        try path.validate(fullName: name)
        return (DatabaseID(project: parts[1], database: parts[3]), path)
    }

    /// `name` split at every `/` (empty pieces kept), byte by byte when it is ASCII.
    static func splitSlashes(_ name: String) -> [String] {
        let utf8 = name.utf8
        // A non-ASCII byte could start a combining mark that joins a `/` into another Character,
        // which splitting Characters would not split at.
        guard !utf8.contains(where: { $0 >= 0x80 }) else {
            return name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        }
        var parts: [String] = []
        var start = utf8.startIndex
        var i = utf8.startIndex
        while i != utf8.endIndex {
            if utf8[i] == 0x2F {
                parts.append(String(name[start..<i]))
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        parts.append(String(name[start..<i]))
        return parts
    }

    /// Parses a full document name, insisting it names a document of `database`.
    static func parseDocumentName(_ name: String, in database: DatabaseID) throws(FirestoreError) -> ResourcePath {
        let (db, path) = try parseName(name)
        guard db == database else {
            throw .invalidArgument("Document \"\(name)\" is not in database \"\(database.name)\".")
        }
        guard path.isDocument else {
            throw .invalidArgument("Document name \"\(name)\" has an odd number of path segments after \"documents\"; a document name needs collection/document pairs.")
        }
        return path
    }
}
