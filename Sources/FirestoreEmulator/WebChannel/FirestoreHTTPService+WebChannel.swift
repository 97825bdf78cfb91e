import Foundation
import HearthCore
import HearthHTTP

/// Listen and Write over WebChannel, on the REST port as the official emulator serves them
/// (`/google.firestore.v1.Firestore/(Listen|Write)/channel`): the Firebase web SDK's two streams.
///
/// - handshake: POST without `SID` → `[[0,["c",SID,"",8,12,30000]]]`, its messages handed to a
///   new session's call;
/// - fast handshake (Closure's `fastHandshake`): GET `SID=null&$req=<forward body>` → the `c` array
///   in `X-HTTP-Initial-Response`, the answer itself the session's first backchannel;
/// - backchannel: GET `RID=rpc&SID&AID&CI` → the session's arrays as they come (`.push`);
/// - forward: POST `SID&AID` → its messages to the call, answered `[backchannel, last id, bytes]`;
/// - `TYPE=terminate` → the session ends.
extension FirestoreHTTPService {
    /// The stream a WebChannel path names; nil for any other path.
    static func webChannelRPC(_ path: String) -> WebChannelSession.RPC? {
        let prefix = "/google.firestore.v1.Firestore/"
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        if rest.hasPrefix("Listen/") { return .listen }
        if rest.hasPrefix("Write/") { return .write }
        return nil
    }

    /// One WebChannel request.
    func webChannel(_ incoming: Request, _ rpc: WebChannelSession.RPC) -> Response {
        var request = incoming
        let sessions = service.webChannels
        let sid = request.query("SID")
        if request.query("TYPE") == "terminate" {
            // Closure sends it as a GET image or a beacon POST; an unknown SID is already gone.
            if let sid, let session = sessions.session(sid, rpc: rpc) { sessions.remove(session) }
            return Self.channelAnswer(nil)
        }
        guard let sid, sid != "null" else {
            if request.method == "GET", sid == "null" { return fastHandshake(&request, rpc) }
            guard request.method == "POST" else { return Self.channelError(400, "A WebChannel handshake is a POST.") }
            return handshake(&request, rpc)
        }
        guard let session = sessions.session(sid, rpc: rpc) else {
            // Closure reads "Unknown SID" (past the text's start) as the session being gone, and
            // the SDK opens a new stream.
            return Self.channelError(400, "Bad request: Unknown SID")
        }
        let aid = request.query("AID").flatMap { Int($0) }
        if request.query("RID") == "rpc" {
            guard request.method == "GET" else { return Self.channelError(400, "A backchannel is a GET.") }
            return backchannel(request, session, acknowledged: aid ?? -1)
        }
        guard request.method == "POST" else { return Self.channelError(400, "A forward channel request is a POST.") }
        if let aid { session.acknowledge(aid) }
        let body: WebChannelWire.ForwardBody
        do { body = try WebChannelWire.parseForward(request.body) } catch { return Self.channelError(400, error.reason) }
        session.receive(body)
        return Self.channelAnswer(session.forwardAnswer())
    }

    /// `session`'s backchannel: the push body its arrays are written to (`CI=1`: a long poll).
    private func backchannel(_ request: Request, _ session: WebChannelSession, acknowledged aid: Int) -> Response {
        let channel = WebChannelBackchannel(longPoll: request.query("CI") == "1", clock: service.clock) { [weak session] channel in
            session?.detach(channel)
        }
        session.attach(channel, acknowledged: aid)
        var headers = Self.channelHeaders()
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("Cache-Control", "private, max-age=0")
        return Response(status: 200, headers: headers, body: .push(channel))
    }

    /// A new session: its call made for the caller the handshake's headers name, the handshake's
    /// messages handed to it, and the `c` array as the answer.
    private func handshake(_ request: inout Request, _ rpc: WebChannelSession.RPC) -> Response {
        let body: WebChannelWire.ForwardBody
        do { body = try WebChannelWire.parseForward(request.body) } catch { return Self.channelError(400, error.reason) }
        guard let session = service.webChannels.open(rpc) else {
            return Self.channelError(503, "Too many WebChannel sessions are open.")
        }
        start(session, &request, body)
        return Self.channelAnswer(WebChannelWire.arrays([(id: 0, payload: WebChannelWire.handshake(sid: session.sid))]))
    }

    /// Closure's fast handshake (`fastHandshake: true`, for 0-RTT): a GET whose `$req` parameter is
    /// the forward body, its headers in `$httpHeaders` or the request's own (Closure then ignores
    /// `encodeInitMessageHeaders`). As the official emulator answers it (observed, 1.19.9): the `c`
    /// array, unchunked, in `X-HTTP-Initial-Response`, and the answer's body is the session's first
    /// backchannel (Closure upgrades the request to one), opening with a no-op as array 1 before
    /// the messages' answers; `CI=1` makes it a long poll. Without `$req`: 400, empty.
    private func fastHandshake(_ request: inout Request, _ rpc: WebChannelSession.RPC) -> Response {
        guard let text = request.query("$req") else { return Self.channelError(400, nil) }
        let body: WebChannelWire.ForwardBody
        do { body = try WebChannelWire.parseForward(Array(text.utf8)) } catch { return Self.channelError(400, error.reason) }
        guard let session = service.webChannels.open(rpc) else {
            return Self.channelError(503, "Too many WebChannel sessions are open.")
        }
        // Attached before the call starts, so the no-op is array 1, as the emulator numbers it.
        var response = backchannel(request, session, acknowledged: 0)
        start(session, &request, body)
        response.headers.set(WebChannelWire.initialResponseHeader,
                             WebChannelWire.arrays([(id: 0, payload: WebChannelWire.handshake(sid: session.sid))]))
        return response
    }

    /// Makes `session`'s call for the caller the handshake's headers name and hands it the
    /// handshake's messages; a token that is refused ends the stream with its error instead.
    private func start(_ session: WebChannelSession, _ request: inout Request, _ body: WebChannelWire.ForwardBody) {
        // The SDK encodes its headers in the body (`encodeInitMessageHeaders`), so no preflight is
        // needed; older SDKs and a fast handshake put them in `$httpHeaders`; plain request
        // headers count last.
        let encoded = body.headers + WebChannelWire.parseHeaderBlock(request.query("$httpHeaders") ?? "")
        func header(_ name: String) -> String? {
            encoded.first { $0.name.lowercased() == name }?.value ?? request.headers[name]
        }
        do throws(FirestoreError) {
            let caller = try webChannelCaller(authorization: header("authorization"), database: request.query("database"),
                                              prefix: header("google-cloud-resource-prefix"))
            let grpc = FirestoreGRPCService(service: service)
            session.start(session.rpc == .listen ? grpc.listenCall(caller: caller, responses: session)
                                                 : grpc.writeCall(caller: caller, responses: session))
            session.receive(body)
        } catch {
            // As the gRPC streams end at once with the token's error: the stream's first answer.
            session.finish(error.grpcStatus)
        }
    }

    /// The caller the stream's `Authorization` names, decided as REST and gRPC decide it; the
    /// project of token checks is the `database` parameter's, else the resource prefix's.
    private func webChannelCaller(authorization: String?, database: String?, prefix: String?) throws(FirestoreError) -> Caller {
        var project = service.configuration.projectID
        for name in [database, prefix] {
            if let name, name.hasPrefix("projects/") {
                project = String(name.dropFirst(9).prefix(while: { $0 != "/" }))
                break
            }
        }
        return try Caller.from(authorization: authorization, projectID: project, verifier: service.tokenVerifier,
                               logger: service.logger, known: service.callers, now: service.clock.now().unixSeconds)
    }

    /// The header fields of every channel answer, as the official emulator sends them: the
    /// browser lets the page read the session headers, and the SDK's requests carry credentials.
    private static func channelHeaders() -> HTTPHeaders {
        var h = HTTPHeaders()
        h.set("Content-Type", "text/plain; charset=utf-8")
        h.set("Access-Control-Expose-Headers", "x-client-wire-protocol, x-http-session-id, x-http-initial-response")
        h.set("Access-Control-Allow-Credentials", "true")
        return h
    }

    /// 200 with `text` as one chunk (none: an empty body).
    private static func channelAnswer(_ text: String?) -> Response {
        Response(status: 200, headers: channelHeaders(), body: .bytes(text.map(WebChannelWire.chunk) ?? []))
    }

    /// `status` with `text` and a newline (none: an empty body).
    private static func channelError(_ status: Int, _ text: String?) -> Response {
        Response(status: status, headers: channelHeaders(), body: .bytes(text.map { Array(($0 + "\n").utf8) } ?? []))
    }
}
