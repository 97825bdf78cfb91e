import HearthProtobuf

/// The little the request log reads from Firestore's Listen and Write messages (google.firestore.v1
/// field numbers, `firestore.proto`): which targets a Listen request adds or removes, which
/// targets a Listen response removes for a denial, how many writes a Write request carries.
///
/// **Decision:** the recorder reads the wire instead of asking Firestore to report, so the log
/// stays a decorator the `hearth` target wraps around the gRPC service (as `RecordingService` is
/// for HTTP), and Firestore's stream code has no hook to keep. Anything it cannot parse is not
/// counted, never an error: the call itself is Firestore's to judge.
enum FirestoreStreamWire {
    /// A Listen request: `add_target` (2) as its id and a short description, or `remove_target` (3).
    static func listenRequest(_ bytes: [UInt8]) -> (added: (id: Int32, what: String)?, removed: Int32?) {
        var r = ProtoReader(bytes)
        var added: (Int32, String)?
        var removed: Int32?
        do throws(ProtoDecodingError) {
            while let (n, wt) = try r.nextField() {
                switch (n, wt) {
                case (2, .lengthDelimited): added = try target(r.readMessage())
                case (3, .varint): removed = Int32(truncatingIfNeeded: try r.readVarint())
                default: try r.skip(wt)
                }
            }
        } catch { return (nil, nil) }
        return (added, removed)
    }

    /// A `Target`: its `target_id` (5) and what it watches (`documents` 3 or `query` 2).
    private static func target(_ reader: ProtoReader) throws(ProtoDecodingError) -> (Int32, String) {
        var r = reader
        var id: Int32 = 0
        var what = "?"
        while let (n, wt) = try r.nextField() {
            switch (n, wt) {
            case (5, .varint): id = Int32(truncatingIfNeeded: try r.readVarint())
            case (3, .lengthDelimited):
                var docs = try r.readMessage()
                var names: [String] = []
                while let (dn, dwt) = try docs.nextField() {
                    if dn == 2, dwt == .lengthDelimited { names.append(shortName(try docs.readString())) } else { try docs.skip(dwt) }
                }
                what = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " (+\(names.count - 3))" : "")
            case (2, .lengthDelimited): what = try query(r.readMessage())
            default: try r.skip(wt)
            }
        }
        return (id, what)
    }

    /// A `QueryTarget`: `parent` (1) and its structured query's `from` (2) collection (`collection_id`
    /// 2, `all_descendants` 3).
    private static func query(_ reader: ProtoReader) throws(ProtoDecodingError) -> String {
        var r = reader
        var parent = ""
        var collection = "?"
        var group = false
        while let (n, wt) = try r.nextField() {
            switch (n, wt) {
            case (1, .lengthDelimited): parent = shortName(try r.readString())
            case (2, .lengthDelimited):
                var q = try r.readMessage()
                while let (qn, qwt) = try q.nextField() {
                    guard qn == 2, qwt == .lengthDelimited else { try q.skip(qwt); continue }
                    var from = try q.readMessage()
                    while let (fn, fwt) = try from.nextField() {
                        switch (fn, fwt) {
                        case (2, .lengthDelimited): collection = try from.readString()
                        case (3, .varint): group = try from.readVarint() != 0
                        default: try from.skip(fwt)
                        }
                    }
                }
            default: try r.skip(wt)
            }
        }
        if group { return "collection group \(collection)" + (parent.isEmpty ? "" : " under \(parent)") }
        return "query " + (parent.isEmpty ? collection : parent + "/" + collection)
    }

    /// `projects/p/databases/d/documents/a/b` as `a/b`.
    static func shortName(_ name: String) -> String {
        guard let r = name.range(of: "/documents") else { return name }
        return String(name[r.upperBound...].drop(while: { $0 == "/" }))
    }

    /// What a Listen response is: a document for the client (`document_change` 3), or targets
    /// removed with a `cause` (`target_change` 2: type 2 REMOVE, `target_ids` 2, `cause` 3 with
    /// `code` 1 and `message` 2).
    enum ListenResponse: Equatable {
        case document
        case removed(targetIDs: [Int32], code: Int, message: String)
        case other
    }

    static func listenResponse(_ bytes: [UInt8]) -> ListenResponse {
        var r = ProtoReader(bytes)
        do throws(ProtoDecodingError) {
            guard let (n, wt) = try r.nextField(), wt == .lengthDelimited else { return .other }
            if n == 3 { return .document }
            guard n == 2 else { return .other }
            var change = try r.readMessage()
            var type: UInt64 = 0
            var ids: [Int32] = []
            var code = 0
            var message = ""
            var hasCause = false
            while let (cn, cwt) = try change.nextField() {
                switch (cn, cwt) {
                case (1, .varint): type = try change.readVarint()
                case (2, _): ids += try change.readVarints(cwt).map { Int32(truncatingIfNeeded: $0) }
                case (3, .lengthDelimited):
                    hasCause = true
                    var cause = try change.readMessage()
                    while let (sn, swt) = try cause.nextField() {
                        switch (sn, swt) {
                        case (1, .varint): code = Int(truncatingIfNeeded: try cause.readVarint())
                        case (2, .lengthDelimited): message = try cause.readString()
                        default: try cause.skip(swt)
                        }
                    }
                default: try change.skip(cwt)
                }
            }
            return type == 2 && hasCause ? .removed(targetIDs: ids, code: code, message: message) : .other
        } catch { return .other }
    }

    /// The database a Firestore request is for: every request's first field (1) is its `database`,
    /// or a `name`/`parent` under it, but UpdateDocument's, a `Document` whose `name` (1) is.
    /// nil when the message names none (or cannot be read).
    static func database(ofRequest bytes: [UInt8]) -> String? {
        var r = ProtoReader(bytes)
        do throws(ProtoDecodingError) {
            while let (n, wt) = try r.nextField() {
                guard n == 1, wt == .lengthDelimited else { try r.skip(wt); continue }
                let field = try r.readBytes()
                if let id = databaseID(ofName: field) { return id }
                var document = ProtoReader(field)
                while let (dn, dwt) = try document.nextField() {
                    if dn == 1, dwt == .lengthDelimited { return databaseID(ofName: try document.readBytes()) }
                    try document.skip(dwt)
                }
                return nil
            }
        } catch { return nil }
        return nil
    }

    /// `d` of `projects/p/databases/d[/…]`, nil for anything else.
    static func databaseID(ofName bytes: [UInt8]) -> String? {
        guard bytes.starts(with: "projects/".utf8) else { return nil }
        let parts = bytes.split(separator: UInt8(ascii: "/"), maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[2].elementsEqual("databases".utf8), !parts[3].isEmpty else { return nil }
        return String(decoding: parts[3], as: UTF8.self)
    }

    /// The number of `writes` (3) in a Write request.
    static func writeCount(_ bytes: [UInt8]) -> Int {
        var r = ProtoReader(bytes)
        var count = 0
        do throws(ProtoDecodingError) {
            while let (n, wt) = try r.nextField() {
                if n == 3 && wt == .lengthDelimited { count += 1 }
                try r.skip(wt)
            }
        } catch { return count }
        return count
    }
}
