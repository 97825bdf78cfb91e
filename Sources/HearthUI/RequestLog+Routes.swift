import HearthCore
import HearthHTTP

extension RequestLog {
    /// Adds the log's endpoints to the hub:
    /// - `GET /emulator/v1/requests?service=&status=&user=&path=&after=&before=&limit=` lists
    ///   entries newest first (`after` = only newer than that seq, for live polling; `before` = the
    ///   next older page), with `latest`, the newest seq overall;
    /// - `GET /emulator/v1/requests/{seq}` one entry with the error body the client received;
    /// - `DELETE /emulator/v1/requests` forgets every entry.
    public func registerHubRoutes(_ hub: Router) {
        hub.get("/emulator/v1/requests") { [self] req, _ in
            var f = Filter()
            f.service = req.query("service")
            f.status = req.query("status")
            f.user = req.query("user")
            f.path = req.query("path")
            f.after = req.query("after").flatMap(Int.init)
            f.before = req.query("before").flatMap(Int.init)
            if let raw = req.query("limit") {
                guard let n = Int(raw), n >= 0 else {
                    return .json(RequestLog.error(400, "INVALID_ARGUMENT", "limit must be a non-negative integer, got '\(raw)'"), status: 400)
                }
                f.limit = min(n, 1000)
            }
            let (entries, latest, kept) = list(f)
            return .json(.object([
                "requests": .array(entries.map { RequestLog.json($0, withBody: false) }),
                "latest": .int(Int64(latest)), "kept": .int(Int64(kept)), "capacity": .int(Int64(capacity)),
            ]))
        }
        hub.get("/emulator/v1/requests/{seq}") { [self] _, p in
            guard let seq = p["seq"].flatMap(Int.init), let e = entry(seq) else {
                return .json(RequestLog.error(404, "NOT_FOUND", "no request \(p["seq"] ?? "") in the log (it keeps the last \(capacity))"), status: 404)
            }
            return .json(RequestLog.json(e, withBody: true))
        }
        hub.delete("/emulator/v1/requests") { [self] _, _ in
            clear()
            return .json(.object([:]))
        }
    }

    static func error(_ code: Int, _ status: String, _ message: String) -> JSON {
        .object(["error": .object(["code": .int(Int64(code)), "message": .string(message), "status": .string(status)])])
    }

    /// An entry's JSON: `{seq, time, service, method, path, status, durationMs, requestId, user,
    /// fields, hasErrorBody}` plus `errorBody`/`errorContentType` when asked.
    static func json(_ e: Entry, withBody: Bool) -> JSON {
        var o = JSONObject()
        o["seq"] = .int(Int64(e.seq))
        o["time"] = .string(e.time.rfc3339(fractionDigits: 3))
        o["service"] = .string(e.service)
        o["method"] = .string(e.method)
        o["path"] = .string(e.path)
        o["status"] = .int(Int64(e.status))
        o["durationMs"] = .double(Double(e.durationMicros) / 1000)
        o["requestId"] = .string(e.requestID)
        o["user"] = e.user.map(JSON.string) ?? .null
        var fields = JSONObject()
        for (k, v) in e.fields { fields[k] = v }
        o["fields"] = .object(fields)
        o["hasErrorBody"] = .bool(e.errorBody != nil)
        if withBody {
            o["errorBody"] = e.errorBody.map(JSON.string) ?? .null
            o["errorContentType"] = e.errorContentType.map(JSON.string) ?? .null
        }
        return .object(o)
    }
}
