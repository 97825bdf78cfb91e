import Foundation
import HearthCore
import HearthHTTP

/// The Firestore port: the `firestore.v1` REST API, the emulator endpoints, `GET /` → `Ok`.
///
/// Paths follow the discovery document (`/v1/projects/{p}/databases/{d}/documents/…`, custom
/// methods as `…/documents:commit`, `…/{document}:runQuery`); `(default)` may arrive
/// percent-encoded. Every answer carries CORS headers, as the emulator's do, so browser code works.
struct FirestoreHTTPService: HTTPService {
    let service: FirestoreService
    /// Where a `:commit` sends its answer once its batch has committed (`RequestDisposition.collectDeferred`):
    /// its handler then returns `answeredLater` instead of waiting for the writer. What is sent
    /// through it goes out as it is: `sendLater` adds the CORS fields the other answers get in `dispose`.
    var later: DeferredAnswer?

    init(service: FirestoreService, later: DeferredAnswer? = nil) {
        self.service = service
        self.later = later
    }

    /// What a handler that sent (or will send) its answer through `later` returns.
    static let answeredLater = Response(status: 0)

    /// Largest request body the API accepts (10 MiB, as Firestore).
    static let bodyLimit = 10 * 1024 * 1024

    func dispose(_ request: Request) -> RequestDisposition {
        if request.method == "OPTIONS" {
            return .respond(Self.withCORS(Self.preflight(request), request))
        }
        // The too-large answer is made before the body is read, for every request, and almost never
        // sent: for the usual request without an Origin it is one made once.
        let tooLarge = request.headers[known: .origin] == nil ? Self.tooLargeAnyOrigin : Self.withCORS(Self.tooLarge, request)
        // The web SDK's Listen and Write streams (WebChannel): a backchannel GET's answer is a
        // push body that lasts as long as the stream.
        if let rpc = Self.webChannelRPC(request.rawPath) {
            return .collect(limit: Self.bodyLimit, tooLarge: tooLarge) { [service] req in
                Self.withCORS(FirestoreHTTPService(service: service).webChannel(req, rpc), req)
            }
        }
        // A commit is answered from its batch's completion: its connection is parked meanwhile and
        // no worker thread sleeps while the group commit runs other callers' bodies (one context
        // switch and wake-up per commit at 16 connections; docs/benchmarks.md, commit29).
        if request.method == "POST", Self.namesCommit(request.rawPath) {
            // The handler adds the CORS fields to what it sends through `later` itself (`sendLater`):
            // a mapped answer was one more object, closure and lock per commit.
            return .collectDeferred(limit: Self.bodyLimit, tooLarge: tooLarge) { [service] req, answer in
                let response = FirestoreHTTPService(service: service, later: answer).handle(req)
                if response.status != Self.answeredLater.status { answer.send(Self.withCORS(response, req)) }
            }
        }
        return .collect(limit: Self.bodyLimit, tooLarge: tooLarge) { [service] req in
            Self.withCORS(FirestoreHTTPService(service: service).handle(req), req)
        }
    }

    /// Whether a path ends in `:commit` (the verb `apiDocuments` then dispatches on, if the rest of the
    /// path is the API's).
    static func namesCommit(_ path: String) -> Bool {
        let suffix: StaticString = ":commit"
        let n = suffix.utf8CodeUnitCount
        let utf8 = path.utf8
        return utf8.withContiguousStorageIfAvailable { p in
            p.count >= n && memcmp(p.baseAddress! + (p.count - n), suffix.utf8Start, n) == 0
        } ?? path.hasSuffix(":commit")
    }

    /// The answer to a body over `bodyLimit`, made once (rendering it for every request, in case,
    /// cost more than the handler's own routing).
    static let tooLarge = FirestoreError.invalidArgument("Request payload size exceeds the limit: \(bodyLimit) bytes.").response()
    /// `tooLarge` with the CORS headers of a request without an Origin.
    static let tooLargeAnyOrigin = withCORS(tooLarge, origin: nil)

    /// The header fields of a JSON answer (`RequestContext.jsonResponse`) to a request without
    /// `Origin`, CORS's included: made once, shared by every such answer.
    static let jsonAnyOrigin = addingCORS(RequestContext.jsonResponse([]), origin: nil).headers

    /// Sends `response` through `later` with the CORS fields `request` calls for (see `later`).
    static func sendLater(_ later: DeferredAnswer, _ response: consuming Response, _ request: Request) {
        later.send(withCORS(response, request))
    }

    // MARK: CORS

    static func preflight(_ request: Request) -> Response {
        var h = HTTPHeaders()
        h.set("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE")
        h.set("Access-Control-Allow-Headers", request.headers["Access-Control-Request-Headers"]
            ?? "Authorization,Content-Type,X-Goog-Api-Client,X-Firebase-GMPID,X-Goog-Request-Params")
        h.set("Access-Control-Max-Age", "86400")
        // The web SDK's requests (its XhrIo and WebChannel) are made with credentials.
        if request.headers[known: .origin] != nil { h.set("Access-Control-Allow-Credentials", "true") }
        return Response(status: 204, headers: h)
    }

    // The answer is consumed: passed on from the handler it is the only owner of its header array,
    // which then takes the CORS fields in place (a borrowed answer's array was copied for them).
    static func withCORS(_ response: consuming Response, _ request: Request) -> Response {
        withCORS(response, origin: request.headers[known: .origin])
    }

    static func withCORS(_ response: consuming Response, origin: String?) -> Response {
        // Already what `addingCORS` would make of it (a JSON answer: `RequestContext.respondPlain`).
        if origin == nil, response.headers.sharesFields(with: jsonAnyOrigin) { return response }
        return addingCORS(consume response, origin: origin)
    }

    private static func addingCORS(_ response: consuming Response, origin: String?) -> Response {
        var r = response
        if let origin {
            r.headers.set("Access-Control-Allow-Origin", origin)
            // The web SDK sends its REST calls and WebChannel requests `withCredentials`: a browser
            // hands the page no answer without this (the official emulator sends it).
            r.headers.set("Access-Control-Allow-Credentials", "true")
            r.headers.add("Vary", "Origin")
        } else {
            r.headers.set("Access-Control-Allow-Origin", "*")
        }
        return r
    }

    // MARK: Dispatch

    func handle(_ incoming: Request) -> Response {
        var request = incoming
        // Google's frontends honour X-HTTP-Method-Override on POST (clients that cannot send PATCH).
        if incoming.method == "POST", let override = incoming.headers[known: .methodOverride]?.uppercased(),
           ["GET", "PATCH", "DELETE", "PUT"].contains(override) {
            request = Request(method: override, rawPath: incoming.rawPath, rawQuery: incoming.rawQuery, hasQuery: incoming.hasQuery,
                              headers: incoming.headers, version: incoming.version, isTLS: incoming.isTLS,
                              remoteAddress: incoming.remoteAddress, id: incoming.id, body: incoming.body)
        }
        // A get of a document the read cache holds skips the router: it would split the path into
        // strings and rebuild the name the entry already has (see `knownDocument`).
        if let entry = knownDocument(request) {
            return answer { () throws(FirestoreError) in try knownGet(request, entry) }
        }
        return routed(request)
    }

    /// `request` through the router, which every request took before `knownDocument` (tests
    /// compare the two).
    func routed(_ request: Request) -> Response {
        // The API's own paths, read from the bytes: the general split below made a string of each
        // segment and copied the array twice on the way to `apiDocuments` (~2k instructions a request).
        // A database's own method (`…/documents:commit`, every request of a transaction): no
        // segments to make at all (`databaseVerb`).
        if request.method == "POST", let (database, verb) = Self.databaseVerb(request) {
            return answer { () throws(FirestoreError) in
                try apiVerb(RequestContext(request: request, database: database, service: service), database, ResourcePath([]), verb)
            }
        }
        if let (database, rest) = Self.apiPath(request) {
            return answer { () throws(FirestoreError) in try apiDocuments(request, database, rest) }
        }
        let segments = Self.pathSegments(request)
        if segments.isEmpty || segments == [""] {
            guard request.method == "GET" || request.method == "HEAD" else { return methodNotAllowed(request) }
            return Response.text("Ok")
        }
        return answer { () throws(FirestoreError) in
            switch segments[0] {
            case "v1", "v1beta1":
                return try api(request, Array(segments.dropFirst()))
            case "emulator":
                return try emulator(request, Array(segments.dropFirst()))
            default:
                return notFound(request)
            }
        }
    }

    /// The handler's answer, or its error's (an internal one logged first).
    private func answer(_ handler: () throws(FirestoreError) -> Response) -> Response {
        do {
            return try handler()
        } catch {
            return errorResponse(error)
        }
    }

    /// An error's answer (an internal one logged first).
    func errorResponse(_ error: FirestoreError) -> Response {
        if case .internal = error {
            service.logger.error("firestore: internal error", [("error", .string(error.message))])
        }
        return error.response()
    }

    /// `request.pathSegments`, split and decoded byte by byte when the path is ASCII (every client
    /// percent-encodes), where the general version searches each segment for `%` through Foundation.
    static func pathSegments(_ request: Request) -> [String] {
        var segments: [String] = []
        segments.reserveCapacity(12)
        // Pieces are made from the bytes: slicing the String itself rounds each bound to a Character
        // boundary, which runs grapheme breaking at every `/`.
        var copy = request.rawPath
        let ascii: Bool = copy.withUTF8 { bytes in
            // A non-ASCII byte could start a combining mark that joins a `/` into another Character,
            // which the general version (splitting Characters) would not split at. Checked over the
            // contiguous bytes (`ResourcePath.isASCII`).
            guard ResourcePath.isASCII(bytes) else { return false }
            var start = 0
            var first = true
            for i in 0...bytes.count {
                guard i == bytes.count || bytes[i] == 0x2F else { continue }
                // The piece before the first `/` is dropped, as `pathSegments` drops it.
                if !first {
                    let piece = UnsafeBufferPointer(rebasing: bytes[start..<i])
                    let text = String(decoding: piece, as: UTF8.self)
                    segments.append(piece.contains(0x25) ? Request.percentDecode(text) : text)
                }
                first = false
                start = i + 1
            }
            return true
        }
        return ascii ? segments : request.pathSegments
    }

    /// `/v1/projects/{p}/databases/{d}/{rest…}` (or `v1beta1`), split as `api` splits it: the
    /// database and the segments after it (at least one). Only for an ASCII path without `%`, where
    /// the segments are the bytes between `/`s as they are; nil for any other path, which takes the
    /// general way (and the same answer).
    static func apiPath(_ request: Request) -> (DatabaseID, [String])? {
        var copy = request.rawPath
        return copy.withUTF8 { bytes -> (DatabaseID, [String])? in
            guard let (database, databaseEnd) = Self.apiDatabase(bytes) else { return nil }
            var rest: [String] = []
            rest.reserveCapacity(8)
            var start = databaseEnd + 1
            while true {
                let end = Self.slash(in: bytes, from: start) ?? bytes.count
                rest.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                guard end < bytes.count else { break }
                start = end + 1
            }
            return (database, rest)
        }
    }

    /// `/v1/projects/{p}/databases/{d}/documents:{verb}` (or `v1beta1`), for a verb of `verbs`: the
    /// database and the verb — what `apiPath` and `apiDocuments` make of such a path (the segments
    /// `["documents:{verb}"]`, then `documents` and the verb split at the `:`, no document path)
    /// without making the segments, their array and its copy (three allocations a request of the
    /// transaction row). Nil for any other path (`PathSegmentsTests`: the two agree).
    static func databaseVerb(_ request: Request) -> (DatabaseID, String)? {
        var copy = request.rawPath
        return copy.withUTF8 { bytes -> (DatabaseID, String)? in
            guard let (database, databaseEnd) = Self.apiDatabase(bytes),
                  Self.hasPrefix(bytes, at: databaseEnd, "/documents:") else { return nil }
            let start = databaseEnd + 11
            guard start < bytes.count, !bytes[start...].contains(0x2F), !bytes[start...].contains(0x3A),
                  let verb = verb(named: UnsafeBufferPointer(rebasing: bytes[start...])) else { return nil }
            return (database, verb)
        }
    }

    /// The database of an ASCII path without `%` that starts `/v1/projects/{p}/databases/{d}/` (or
    /// `v1beta1`), and the index of the `/` after `{d}`.
    private static func apiDatabase(_ bytes: UnsafeBufferPointer<UInt8>) -> (DatabaseID, Int)? {
        guard ResourcePath.isASCII(bytes), !bytes.contains(0x25) else { return nil }
        var i: Int
        if Self.hasPrefix(bytes, at: 0, "/v1/projects/") {
            i = 13
        } else if Self.hasPrefix(bytes, at: 0, "/v1beta1/projects/") {
            i = 18
        } else {
            return nil
        }
        guard let projectEnd = Self.slash(in: bytes, from: i), projectEnd > i,
              Self.hasPrefix(bytes, at: projectEnd, "/databases/") else { return nil }
        let project = SmallASCII.string(UnsafeBufferPointer(rebasing: bytes[i..<projectEnd]))
        i = projectEnd + 11
        guard let databaseEnd = Self.slash(in: bytes, from: i), databaseEnd > i else { return nil }
        let database = SmallASCII.string(UnsafeBufferPointer(rebasing: bytes[i..<databaseEnd]))
        return (DatabaseID(project: project, database: database), databaseEnd)
    }

    /// Whether `bytes` hold `prefix` at `offset`.
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        return bytes.count - offset >= n && memcmp(bytes.baseAddress! + offset, prefix.utf8Start, n) == 0
    }

    /// The index of the first `/` at or after `start`.
    private static func slash(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < bytes.count {
            if bytes[i] == 0x2F { return i }
            i += 1
        }
        return nil
    }

    /// A path or method no API route takes: Google's frontends answer a bare 404 (not an API
    /// error: no method was reached), as the emulator does with `Not Found`.
    func notFound(_ request: Request) -> Response {
        Response.text("Not Found", status: 404)
    }

    /// A known path with a method it does not take is, to Google's frontends, a path no route
    /// matches: the same bare 404.
    func methodNotAllowed(_ request: Request) -> Response {
        notFound(request)
    }

    /// The custom methods of the `documents` resource (all POST).
    static let verbs: Set<String> = [
        "batchGet", "beginTransaction", "commit", "rollback", "batchWrite", "runQuery", "runAggregationQuery",
        "listCollectionIds", "partitionQuery", "listen", "write",
    ]

    /// A last segment split at its last `:` when one of `verbs` follows it: (what precedes, the verb).
    static func splitVerb(_ last: String) -> (String, String)? {
        // An ASCII segment is split on its bytes (Characters are its bytes): searching and slicing
        // the String cost ~1k instructions a request.
        var copy = last
        let ascii: (String, String)?? = copy.withUTF8 { b in
            guard ResourcePath.isASCII(b) else { return nil }
            guard let colon = b.lastIndex(of: UInt8(ascii: ":")) else { return .some(nil) }
            guard let v = verb(named: UnsafeBufferPointer(rebasing: b[(colon + 1)...])) else { return .some(nil) }
            return .some((String(decoding: UnsafeBufferPointer(rebasing: b[..<colon]), as: UTF8.self), v))
        }
        if let ascii { return ascii }
        // The last `:` found among the bytes, not the Characters (grapheme breaking): when it starts a
        // Character with a combining mark, what follows is no verb either way.
        guard let colon = last.utf8.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        let v = String(last[last.utf8.index(after: colon)...])
        return verbs.contains(v) ? (String(last[..<colon]), v) : nil
    }

    /// The member of `verbs` spelled by `bytes`, as a literal (no string made to look it up).
    static func verb(named bytes: UnsafeBufferPointer<UInt8>) -> String? {
        func spells(_ literal: StaticString) -> Bool {
            literal.utf8CodeUnitCount == bytes.count && memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
        }
        guard !bytes.isEmpty else { return nil }
        if spells("commit") { return "commit" }
        if spells("batchGet") { return "batchGet" }
        if spells("beginTransaction") { return "beginTransaction" }
        if spells("runQuery") { return "runQuery" }
        if spells("rollback") { return "rollback" }
        if spells("batchWrite") { return "batchWrite" }
        if spells("runAggregationQuery") { return "runAggregationQuery" }
        if spells("listCollectionIds") { return "listCollectionIds" }
        if spells("partitionQuery") { return "partitionQuery" }
        if spells("listen") { return "listen" }
        if spells("write") { return "write" }
        return nil
    }

    /// `/v1/projects/{p}/databases/{d}/documents[/…][:verb]`.
    private func api(_ request: Request, _ s: [String]) throws(FirestoreError) -> Response {
        guard s.count >= 5, s[0] == "projects", !s[1].isEmpty, s[2] == "databases", !s[3].isEmpty else {
            return notFound(request)
        }
        return try apiDocuments(request, DatabaseID(project: s[1], database: s[3]), Array(s[4...]))
    }

    /// The API below a database: `rest` is the path's segments after `databases/{d}` (at least one).
    private func apiDocuments(_ request: Request, _ db: DatabaseID, _ segments: consuming [String]) throws(FirestoreError) -> Response {
        var rest = segments
        var verb: String?
        if request.method == "POST", let last = rest.last, let (name, v) = Self.splitVerb(last) {
            verb = v
            rest[rest.count - 1] = name
        }
        guard rest.first == "documents" else { return notFound(request) }
        var pathSegments = Array(rest.dropFirst())
        // Discovery-generated clients build `{+parent}/{collectionId}` from a parent matching
        // `…/documents/.*`, so a top-level collection arrives as `documents//{collectionId}`.
        if pathSegments.count > 1, pathSegments[0].isEmpty { pathSegments.removeFirst() }
        let path = ResourcePath(pathSegments)
        if !path.segments.isEmpty {
            try path.validate(in: db)
        }
        let context = try RequestContext(request: request, database: db, service: service)
        if let verb { return try apiVerb(context, db, path, verb) }

        switch (request.method, path.isDocument) {
        case ("GET", true), ("HEAD", true): return try getDocument(context, path: path)
        case ("GET", false), ("HEAD", false): return try listDocuments(context, collection: path)
        case ("POST", false) where path.isCollection: return try createDocument(context, collection: path)
        case ("POST", _):
            // `{parent}/{collectionId}` with the parent a collection (or the root with no id).
            let parent = db.name(of: ResourcePath(Array(path.segments.dropLast())))
            throw .invalidArgument("Document parent name \"\(parent)\" lacks \"/\" at index \(parent.utf8.count).")
        case ("PATCH", false), ("DELETE", false):
            let name = db.name(of: path)
            throw .invalidArgument("Document name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
        case ("PATCH", true): return try patchDocument(context, path: path)
        case ("DELETE", true): return try deleteDocument(context, path: path)
        default: return methodNotAllowed(request)
        }
    }

    /// A database's or a document's custom method (`documents:commit`, `…/d1:runQuery`), its context made.
    private func apiVerb(_ context: RequestContext, _ db: DatabaseID, _ path: ResourcePath, _ verb: String) throws(FirestoreError) -> Response {
        switch verb {
        case "batchGet", "beginTransaction", "commit", "rollback", "batchWrite":
            // These take the database, not a document: a longer path is a bad payload.
            guard path.segments.isEmpty else { throw .invalidArgument("Payload isn't valid for request.") }
        case "runQuery", "runAggregationQuery", "listCollectionIds", "partitionQuery":
            guard path.segments.isEmpty || path.isDocument else {
                let parent = db.name(of: path)
                throw .invalidArgument("Document parent name \"\(parent)\" lacks \"/\" at index \(parent.utf8.count).")
            }
        default:
            break
        }
        switch verb {
        case "batchGet": return try batchGet(context)
        case "beginTransaction": return try beginTransaction(context)
        case "commit": return try commit(context)
        case "rollback": return try rollback(context)
        case "batchWrite": return try batchWrite(context)
        case "runQuery": return try runQuery(context, parent: path)
        case "runAggregationQuery": return try runAggregationQuery(context, parent: path)
        case "listCollectionIds": return try listCollectionIds(context, parent: path)
        case "partitionQuery": return try partitionQuery(context, parent: path)
        default:
            throw .unimplemented("The \(verb) method is not supported by this emulator over REST.")
        }
    }
}
