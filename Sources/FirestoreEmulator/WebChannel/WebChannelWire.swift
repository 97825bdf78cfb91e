import Foundation
import HearthCore
import HearthGRPC
import HearthHTTP

/// The bytes of Closure's WebChannel (BrowserChannel `VER=8`), as the Firebase web SDK speaks it
/// for Firestore's Listen and Write streams: pure functions, no state.
///
/// Related: closure-library `closure/goog/labs/net/webchannel/` (`webchannelbase.js` builds the
/// requests, `wirev8.js` the forward bodies, `channelrequest.js` reads the chunks) and
/// firebase-js-sdk `platform/browser/webchannel_connection.ts`; the official emulator's answers
/// are in docs/firestore.md, *WebChannel*.
enum WebChannelWire {
    /// The protocol version the SDK asks for (`VER=8`) and the handshake confirms.
    static let version = 8
    /// The server version in the handshake (the official emulator's).
    static let serverVersion = 12
    /// The keep-alive the handshake announces, in ms: the client gives a backchannel 1.5 times this
    /// before it retries, so a no-op must come sooner (`WebChannelSessions.noopInterval`).
    static let keepAliveMs = 30_000

    /// What a forward-channel POST carries: `count=N&ofs=M&req0___data__=<JSON>…`, and on the
    /// handshake the `headers=` block the SDK's `encodeInitMessageHeaders` puts there.
    struct ForwardBody: Equatable {
        /// The map id of the first message (`ofs`): a retried POST repeats ids already taken.
        var offset: Int
        /// Each message's JSON text (`reqK___data__`, k = 0 ..< count), in order.
        var messages: [String]
        /// `Name:value` lines of the `headers` field, names as sent.
        var headers: [(name: String, value: String)]

        static func == (a: ForwardBody, b: ForwardBody) -> Bool {
            a.offset == b.offset && a.messages == b.messages
                && a.headers.map { [$0.name, $0.value] } == b.headers.map { [$0.name, $0.value] }
        }
    }

    /// A forward body that cannot be read: the request is answered 400 with this text.
    struct BadRequest: Error, Equatable {
        let reason: String
    }

    /// Reads a forward-channel body (application/x-www-form-urlencoded).
    static func parseForward(_ body: [UInt8]) throws(BadRequest) -> ForwardBody {
        let text = String(decoding: body, as: UTF8.self)
        let fields = Request.parseQuery(text, plusAsSpace: true)
        func field(_ name: String) -> String? {
            for f in fields where f.name == name { return f.value ?? "" }
            return nil
        }
        // A handshake without messages sends `count=0` and no `ofs`.
        let count = field("count").map { Int($0) } ?? 0
        guard let count, count >= 0, count <= 1000 else { throw BadRequest(reason: "Invalid count.") }
        let offset = field("ofs").map { Int($0) } ?? 0
        guard let offset, offset >= 0 else { throw BadRequest(reason: "Invalid ofs.") }
        var messages: [String] = []
        messages.reserveCapacity(count)
        for k in 0..<count {
            // `sendRawJson`: the whole message is one field. A map of other keys is not what the
            // Firestore SDK sends, and has no proto3 JSON to read.
            guard let data = field("req\(k)___data__") else {
                throw BadRequest(reason: "Message \(k) has no __data__ field.")
            }
            messages.append(data)
        }
        return ForwardBody(offset: offset, messages: messages, headers: field("headers").map(parseHeaderBlock) ?? [])
    }

    /// `Name:value\r\n…` (Closure's `HttpCors.generateHttpHeadersOverwriteParam`), as the
    /// `headers` body field and the `$httpHeaders` query parameter carry headers.
    static func parseHeaderBlock(_ block: String) -> [(name: String, value: String)] {
        block.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }).compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// One chunk of an answer: its length in UTF-16 code units, a newline, the text. Closure reads
    /// the length against `responseText`, a JavaScript string, so a character outside the BMP
    /// counts twice and a length in bytes would cut a message short.
    static func chunk(_ text: String) -> [UInt8] {
        var out = Array(String(text.utf16.count).utf8)
        out.append(0x0A)
        out.append(contentsOf: text.utf8)
        return out
    }

    /// `[[id,payload],…]`: arrays with their ids, each payload already JSON text.
    static func arrays<S: Sequence>(_ items: S) -> String where S.Element == (id: Int, payload: String) {
        var s = "["
        var first = true
        for item in items {
            if !first { s += "," }
            first = false
            s += "[\(item.id),\(item.payload)]"
        }
        return s + "]"
    }

    /// The handshake's array: `["c", SID, host prefix, version, server version, keep-alive ms]`.
    static func handshake(sid: String) -> String {
        "[\"c\",\(JSON.string(sid).serialized()),\"\",\(version),\(serverVersion),\(keepAliveMs)]"
    }

    /// A message's payload: `[message]` (the SDK reads `data[0]`).
    static func message(_ json: JSONObject) -> String {
        "[" + JSON.object(json).serialized() + "]"
    }

    /// The header a fast handshake's answer carries the `c` array in (Closure's
    /// `WebChannel.X_HTTP_INITIAL_RESPONSE`): its body is already the backchannel.
    static let initialResponseHeader = "X-HTTP-Initial-Response"

    /// The keep-alive array.
    static let noop = "[\"noop\"]"
    /// The array ending a stream that finished OK (the official emulator's, after an empty Write).
    static let close = "[\"close\"]"

    /// The payload of a stream ending with `status`: `[{"error":{"message":…,"status":…}}]`, the
    /// message led by the status name as the official emulator words it (the SDK maps `status`
    /// to its code and shows the message).
    static func error(_ status: GRPCStatus) -> String {
        let name = statusName(status.code)
        let body = JSONObject([("message", .string("\(name): \(status.message)")), ("status", .string(name))])
        return message(JSONObject([("error", .object(body))]))
    }

    /// A forward POST's answer: `[backchannel present (1/0), last array id, outstanding bytes]`.
    static func forwardAnswer(backchannel: Bool, lastArrayID: Int, outstanding: Int) -> String {
        "[\(backchannel ? 1 : 0),\(lastArrayID),\(outstanding)]"
    }

    /// google.rpc.Code's names, as `error.status` carries them.
    static func statusName(_ code: GRPCStatus.Code) -> String {
        switch code {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        }
    }
}
