import Foundation
import HearthCore
import HearthHTTP
import HearthSQLite

/// The hub listener: health, the emulator map, the clock, the global reset, and every service's
/// emulator-only routes.
enum Hub {
    static func makeRouter(context: ServiceContext, units: [ServiceUnit], listeners: @escaping @Sendable () -> [(name: String, host: String, port: Int)]) -> Router {
        let router = Router()
        let clock = context.clock
        router.notFound = { req in
            .json(errorBody(404, "NOT_FOUND", "No hub route for \(req.method) \(req.rawPath)"), status: 404)
        }
        router.get("/healthz") { _, _ in .text("ok") }
        // Log lines that could not be written (full disk, closed pipe): dropped, never fatal. And
        // where the memory is (the soak samples it): the allocator's live and held bytes, SQLite's,
        // and SQLite's page caches per file and connection (the writer's, the idle readers'); and per
        // file the checkpoint passes and their seconds (the writer's are stops of every commit).
        let files = [(DataFiles.mainFile, context.files.main), (DataFiles.firestoreFile, context.files.firestore)]
        router.get("/emulator/v1/stats") { _, _ in
            let heap = ServerAllocator.totals()
            var caches = JSONObject()
            var checkpoints = JSONObject()
            for (name, db) in files {
                let use = db.cacheUse()
                caches[name] = .object(["writerCacheBytes": .int(Int64(use.writerBytes)), "idleReaderCacheBytes": .int(Int64(use.idleReaderBytes)),
                                        "readers": .int(Int64(use.readers)), "idleReaders": .int(Int64(use.idleReaders))])
                let (passes, seconds) = (db.checkpointPasses, db.checkpointSeconds)
                checkpoints[name] = .object(["threadPasses": .int(Int64(passes.thread)), "writerPasses": .int(Int64(passes.writer)),
                                             "threadSeconds": .double(seconds.thread), "writerSeconds": .double(seconds.writer)])
            }
            // Whether each HTTP/2 loop and REST worker polls (BusyPoll): a benchmark row's loop CPU
            // alone could not say why it fell (docs/benchmarks.md, h2poll).
            let polls: [JSON] = BusyPollRecord.all().map { r in
                .object(["name": .string(r.name), "polling": .bool(r.polling), "windowMicroseconds": .int(Int64(r.windowNanoseconds / 1000)),
                         "pausesPolled": .int(Int64(r.pausesPolled)), "pausesSlept": .int(Int64(r.pausesSlept)),
                         "trialsKeptPolling": .int(Int64(r.trialsKeptPolling)), "trialsKeptSleeping": .int(Int64(r.trialsKeptSleeping))])
            }
            return .json(.object([
                "busyPoll": .array(polls),
                "droppedLogWrites": .int(Int64(StandardStream.droppedWrites)),
                "memory": .object(["heapInUseBytes": .int(Int64(heap.inUse)), "heapHeldBytes": .int(Int64(heap.held)),
                                   "sqliteBytes": .int(Int64(Database.memoryInUse)), "sqliteCaches": .object(caches)]),
                "checkpoints": .object(checkpoints),
            ]))
        }
        router.get("/") { _, _ in .text("Hearth hub: see /emulators") }
        router.get("/emulators") { _, _ in
            var o = JSONObject()
            for l in listeners() {
                o[l.name] = .object(["name": .string(l.name), "host": .string(l.host), "port": .int(Int64(l.port))])
            }
            return .json(.object(o))
        }
        let resets = units.map { ($0.name, $0.reset) }
        let resetBox = UncheckedBox(resets)
        router.post("/emulator/v1/reset") { _, _ in
            for (name, reset) in resetBox.value {
                do { try reset() } catch {
                    return .json(errorBody(500, "INTERNAL", "reset of \(name) failed: \(error)"), status: 500)
                }
            }
            return .json(.object([:]))
        }
        // Seed data out of a running (or in-memory) hearth, into a directory on this machine.
        let unitsBox = UncheckedBox(units)
        router.post("/emulator/v1/export") { req, _ in
            guard let body = try? JSON.parse(req.body), let path = body["path"]?.stringValue, !path.isEmpty else {
                return .json(errorBody(400, "INVALID_ARGUMENT", "expected {\"path\": \"DIR\"}"), status: 400)
            }
            do { try SeedData.export(unitsBox.value, to: path) } catch {
                return .json(errorBody(500, "INTERNAL", "\(error)"), status: 500)
            }
            return .json(.object(["path": .string(path)]))
        }
        router.get("/emulator/v1/clock") { _, _ in .json(clockJSON(clock)) }
        router.put("/emulator/v1/clock") { req, _ in
            let body: JSON
            do { body = try JSON.parse(req.body) } catch {
                return .json(errorBody(400, "INVALID_ARGUMENT", "Invalid JSON body: \(error)"), status: 400)
            }
            if let frozen = body["frozenAt"]?.stringValue {
                guard let t = Instant(rfc3339: frozen) else {
                    return .json(errorBody(400, "INVALID_ARGUMENT", "frozenAt must be an RFC 3339 instant, got '\(frozen)'"), status: 400)
                }
                // Year 0000, or 9999-12-31 with a negative offset, parses to a time no date can write.
                guard t >= .earliest, t <= .latest else {
                    return .json(errorBody(400, "INVALID_ARGUMENT", "frozenAt must be between years 1 and 9999, got '\(frozen)'"), status: 400)
                }
                clock.freeze(at: t)
            } else if let advance = body["advanceSeconds"]?.doubleValue {
                guard clock.advance(seconds: advance) else {
                    return .json(errorBody(400, "INVALID_ARGUMENT",
                                           "advanceSeconds must keep the clock between years 1 and 9999, got \(advance)"), status: 400)
                }
            } else if let mode = body["mode"]?.stringValue {
                switch mode {
                case "system": clock.useSystemTime()
                case "frozen": clock.freeze(at: clock.now())
                default: return .json(errorBody(400, "INVALID_ARGUMENT", "mode must be system or frozen, got '\(mode)'"), status: 400)
                }
            } else {
                return .json(errorBody(400, "INVALID_ARGUMENT", "expected one of frozenAt, advanceSeconds or mode"), status: 400)
            }
            return .json(clockJSON(clock))
        }
        for unit in units { unit.registerHubRoutes(router) }
        return router
    }

    static func clockJSON(_ clock: Clock) -> JSON {
        let now = clock.now()
        switch clock.mode {
        case .frozen:
            return .object(["now": .string(now.rfc3339()), "mode": .string("frozen")])
        case .system(let offset):
            return .object(["now": .string(now.rfc3339()), "mode": .string("system"), "offsetSeconds": .double(Double(offset) / 1_000_000)])
        }
    }

    /// Google-style error JSON.
    static func errorBody(_ code: Int, _ status: String, _ message: String) -> JSON {
        .object(["error": .object(["code": .int(Int64(code)), "message": .string(message), "status": .string(status)])])
    }
}

/// Carries a value the compiler cannot prove Sendable into a `@Sendable` route closure.
/// Used only for values fixed at wiring time and never mutated afterwards.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
