import HearthCore
import HearthHTTP

extension LiveEvents {
    /// Adds `GET /emulator/v1/events` to the hub: a `text/event-stream` of `request` events (the
    /// log's entries, filtered by `service`, `status`, `user`, `path` as the listing is, `id:` their
    /// seq) and `document` events (Firestore changes); `topics=requests,documents` picks (default
    /// both). A reconnect's `Last-Event-ID` header (or `lastEventId` parameter) replays the entries
    /// after that seq. The listener must allow push bodies.
    public func registerHubRoutes(_ hub: Router) {
        hub.get("/emulator/v1/events") { [self] req, _ in
            let topics = Set((req.query("topics") ?? "requests,documents").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let unknown = topics.subtracting(["requests", "documents"])
            guard unknown.isEmpty, !topics.isEmpty else {
                return .json(RequestLog.error(400, "INVALID_ARGUMENT", "topics must be a comma-separated list of requests, documents; got '\(req.query("topics") ?? "")'"), status: 400)
            }
            var filter: RequestLog.Filter?
            if topics.contains("requests") {
                var f = RequestLog.Filter()
                f.service = req.query("service")
                f.status = req.query("status")
                f.user = req.query("user")
                f.path = req.query("path")
                filter = f
            }
            let rawLast = req.headers["Last-Event-ID"] ?? req.query("lastEventId")
            var last: Int?
            if let rawLast, !rawLast.isEmpty {
                guard let n = Int(rawLast.trimmingCharacters(in: .whitespaces)), n >= 0 else {
                    return .json(RequestLog.error(400, "INVALID_ARGUMENT", "Last-Event-ID must be a request seq, got '\(rawLast)'"), status: 400)
                }
                last = n
            }
            let stream = open(requests: filter, documents: topics.contains("documents"), lastEventID: last)
            var headers = HTTPHeaders()
            headers.set("Content-Type", "text/event-stream; charset=utf-8")
            headers.set("Cache-Control", "no-cache")
            headers.set("X-Accel-Buffering", "no")
            return Response(status: 200, headers: headers, body: .push(stream))
        }
    }
}
