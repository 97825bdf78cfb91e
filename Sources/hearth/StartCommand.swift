import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthGRPC
import HearthSQLite
import HearthUI

/// `hearth start`: opens the database, wires every service, starts every listener, waits for a signal.
enum StartCommand {
    /// A startup failure: one line on stderr, exit status 2, nothing overwritten.
    struct StartupError: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ options: StartOptions) -> Int32 {
        // Watched from the first instruction: a SIGTERM sent as soon as the ready file appears (or
        // even before) must stop this process, not fall into a gap before the watch exists.
        let termination = TerminationWatch(watchingParent: options.exitWithParent)
        let clock = Clock(frozenAt: options.clock)
        let entropy: @Sendable (Int) -> [UInt8] = { SecureRandom.bytes($0) }
        let ids = IDGenerator(seed: options.seed, entropy: entropy)
        // Request ids come from their own stream so that logging does not shift the ids services generate.
        let requestIDs = IDGenerator(seed: options.seed.map { $0 &+ 0x5EED }, entropy: entropy)
        // Log lines carry wall-clock time, not the emulator clock, so they line up with other tools' logs.
        // With rules off, every line (request lines included) says so: nobody reads a log of
        // "allowed" requests without knowing nothing was checked.
        let logger = Logger(format: options.logFormat, quiet: options.quiet,
                            everyLine: options.rulesChoice == .open ? [("rules", .string("OPEN"))] : [])
        if options.rulesChoice == .open {
            logger.warning("--rules open: Firestore security rules are OFF; every request is allowed")
        }

        let files: DataFiles
        let lock: DataDirectoryLock?
        do {
            (files, lock) = try openDatabase(options)
        } catch {
            fail("\(error)")
            return 2
        }
        let context = ServiceContext(options: options, files: files, clock: clock, ids: ids, logger: logger)
        let units: [ServiceUnit]
        do {
            units = try Wiring.makeUnits(context)
            if let dir = options.importDir {
                for (name, count) in try SeedData.importData(units, from: dir) {
                    logger.info("imported \(count) items into \(name)", [("from", .string(dir))])
                }
            }
        } catch {
            fail("\(error)")
            return 2
        }

        let registry = ListenerRegistry()
        var servers: [(HTTPServer, ServiceUnit?)] = []
        let hubRouter = Hub.makeRouter(context: context, units: units, listeners: { registry.all })
        let requestLog = RequestLog(capacity: options.requestLogSize)
        let readyStatus = ReadyStatus()
        let liveEvents = LiveEvents(log: requestLog, documents: units.lazy.compactMap(\.documentChanges).first)
        WebUI.registerHubRoutes(hubRouter, log: requestLog, status: readyStatus, events: liveEvents)
        let hostGuard = WebUI.hostGuard(options, registry)
        var hubConfiguration = HTTPServer.Configuration(host: options.host, port: options.hubPort, threads: 2)
        hubConfiguration.allowsPush = true  // GET /emulator/v1/events
        let hub = HTTPServer(name: "hub", configuration: hubConfiguration,
                             service: GuardedService(hubRouter, guard: hostGuard), logger: logger, ids: requestIDs, clock: clock)
        do {
            try hub.start()
            servers.append((hub, nil))
            registry.add("hub", options.advertisedHost, hub.port)
            for unit in units {
                var configuration = HTTPServer.Configuration(host: options.host, port: unit.port,
                                                             threads: unit.grpc != nil ? options.firestoreThreads : options.threads,
                                                             connectionMemoryLimit: connectionMemory(unit.name),
                                                             tlsCertificatePEM: unit.tlsCertificatePEM, tlsKeyPEM: unit.tlsKeyPEM)
                configuration.http2BusyPollMicroseconds = options.http2BusyPollMicroseconds
                // The Firestore listener's HTTP/1.1 workers poll too (`WorkerPoll`): its clients make
                // one request at a time; the others' rows (S3 against nginx) were measured without.
                if unit.grpc != nil { configuration.http1BusyPollMicroseconds = options.http1BusyPollMicroseconds }
                // Firestore's REST commits are answered from their batch's completion, their
                // connections parked meanwhile (`RequestDisposition.collectDeferred`).
                configuration.allowsDeferred = unit.grpc != nil
                // Its WebChannel backchannels (the web SDK's Listen and Write) are push bodies.
                configuration.allowsPush = unit.grpc != nil
                let server = HTTPServer(
                    name: unit.name,
                    configuration: configuration,
                    service: RecordingService(unit.name, unit.http, log: requestLog, clock: clock), logger: logger, ids: requestIDs, clock: clock,
                    http2: unit.grpc.map { GRPCServer(name: unit.name, services: $0.map { RecordingGRPCService(unit.name, $0, log: requestLog, clock: clock) },
                                                      logger: logger, ids: requestIDs) })
                try server.start()
                unit.didStart(server.port)
                servers.append((server, unit))
                registry.add(unit.name, options.advertisedHost, server.port)
            }
            let ui = WebUI.makeServer(options, hub: hubRouter, started: servers.compactMap { s in s.1.map { ($0, s.0.port) } },
                                      guard: hostGuard, ids: requestIDs, clock: clock)
            try ui.start()
            servers.append((ui, nil))
            registry.add("ui", options.advertisedHost, ui.port)
        } catch {
            for (s, _) in servers { s.stop(graceSeconds: 0) }
            for u in units { u.shutdown() }
            fail("\(error)")
            return 2
        }

        let ready = readyJSON(options: options, servers: servers.map { ($0.0.name, $0.0) })
        readyStatus.json = ready
        printBanner(options: options, ready: ready)
        if let path = options.readyFile ?? (options.inMemory ? nil : (options.dataDir as NSString).appendingPathComponent("hearth.ready.json")) {
            do { try writeAtomically(ready.serialized(pretty: true) + "\n", to: path) } catch {
                logger.warning("cannot write ready file \(path): \(error)")
            }
        }

        let trimmer = HeapTrimmer()
        termination.wait()
        trimmer.stop()
        logger.info("shutting down")
        liveEvents.finishAll()
        // Stop accepting on every listener first, then let in-flight requests finish.
        for (s, _) in servers.reversed() { s.stop(graceSeconds: 5) }
        var status: Int32 = 0
        if let dir = options.exportOnExit {
            // After the listeners stopped: no write can land after the export.
            do { try SeedData.export(units, to: dir) } catch {
                logger.error("\(error)")
                status = 1
            }
        }
        for u in units { u.shutdown() }
        do { try files.checkpoint() } catch {
            logger.warning("checkpoint at shutdown failed (the WAL is replayed at the next start): \(error)")
        }
        // Released only after the ready file is gone, so a successor never sees ours.
        defer { withExtendedLifetime(lock) {} }
        if let path = options.readyFile ?? (options.inMemory ? nil : (options.dataDir as NSString).appendingPathComponent("hearth.ready.json")) {
            try? FileManager.default.removeItem(atPath: path)
        }
        return status
    }

    /// libmicrohttpd's per-connection memory for a service's listener: it caps the request line and
    /// headers (431 beyond), and libmicrohttpd zeroes all of it after every keep-alive request
    /// (`MHD_pool_reset`; one `rep stosb`, which callgrind counts per byte but which takes ~1 µs per
    /// request natively: docs/benchmarks.md, commitcpu), so it is as small as the real service allows. Amazon S3
    /// refuses a request header section over 8 KB (`RequestHeaderSectionTooLarge`, MaxSizeAllowed
    /// 8192; the S3 service answers that itself, in S3's XML, up to this pool); 32 KiB holds 8 KB plus
    /// a long presigned request line (keys up to 1 KB, percent-encoded, and a session token).
    /// Google's front ends (Auth, Firestore, Storage, and the uploads API that stands in for an
    /// app's own) keep 64 KiB: no smaller documented cap was found, and a smaller
    /// pool must not refuse headers they accept. The pool also sizes the read buffer each upload
    /// `recv` fills (half of it): docs/benchmarks.md (http1cost) has the 1 GiB PutObject row at both.
    static func connectionMemory(_ service: String) -> Int {
        service == "s3" ? 32 << 10 : 64 << 10
    }

    /// Opens and migrates the databases (locking the data directory first unless in memory).
    static func openDatabase(_ options: StartOptions) throws -> (DataFiles, DataDirectoryLock?) {
        if options.inMemory { return (try DataFiles(directory: nil), nil) }
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: options.dataDir, isDirectory: &isDir) {
            guard isDir.boolValue else { throw StartupError(description: "data directory \(options.dataDir) is a file, not a directory") }
        } else {
            do { try fm.createDirectory(atPath: options.dataDir, withIntermediateDirectories: true) } catch {
                throw StartupError(description: "cannot create data directory \(options.dataDir): \(error.localizedDescription)")
            }
        }
        guard access(options.dataDir, R_OK | W_OK | X_OK) == 0 else {
            throw StartupError(description: "data directory \(options.dataDir) is not readable and writable")
        }
        let lock = try DataDirectoryLock(directory: options.dataDir)
        for file in [DataFiles.mainFile, DataFiles.firestoreFile] {
            let path = (options.dataDir as NSString).appendingPathComponent(file)
            if fm.fileExists(atPath: path), access(path, R_OK | W_OK) != 0 {
                throw StartupError(description: "database \(path) is not readable and writable")
            }
        }
        return (try DataFiles(directory: options.dataDir), lock)
    }

    static func readyJSON(options: StartOptions, servers: [(String, HTTPServer)]) -> JSON {
        var services = JSONObject()
        for (name, server) in servers {
            let scheme = server.configuration.tlsCertificatePEM != nil ? "https" : "http"
            services[name] = .object(["host": .string(options.advertisedHost), "port": .int(Int64(server.port)),
                                      "url": .string("\(scheme)://\(options.advertisedURLHost):\(server.port)"),
                                      "bind": .string(options.host)])
        }
        return .object([
            "version": .string(Version.string),
            "pid": .int(Int64(getpid())),
            "project": .string(options.project),
            "dataDir": options.inMemory ? .null : .string(options.dataDir),
            "rules": .object(JSONObject(options.rulesChoice.readyJSON.map { ($0.0, JSON.string($0.1)) })),
            "storageRules": .object(JSONObject(options.storageRulesChoice.readyJSON.map { ($0.0, JSON.string($0.1)) })),
            "services": .object(services),
            "env": .object(JSONObject(environment(options: options, servers: servers).map { ($0.0, JSON.string($0.1)) })),
        ])
    }

    static func environment(options: StartOptions, servers: [(String, HTTPServer)]) -> [(String, String)] {
        func hostPort(_ name: String) -> String? {
            guard let s = servers.first(where: { $0.0 == name })?.1 else { return nil }
            return "\(options.advertisedURLHost):\(s.port)"
        }
        var env: [(String, String)] = []
        if let a = hostPort("auth") { env.append(("FIREBASE_AUTH_EMULATOR_HOST", a)) }
        if let f = hostPort("firestore") { env.append(("FIRESTORE_EMULATOR_HOST", f)) }
        if let s3 = servers.first(where: { $0.0 == "s3" })?.1 {
            env.append(("AWS_ENDPOINT_URL_S3", "\(s3.configuration.tlsCertificatePEM != nil ? "https" : "http")://\(options.advertisedURLHost):\(s3.port)"))
        }
        if let s = hostPort("storage") {
            // google-cloud-storage wants a URL, the Firebase Admin SDKs host:port.
            env.append(("STORAGE_EMULATOR_HOST", "http://\(s)"))
            env.append(("FIREBASE_STORAGE_EMULATOR_HOST", s))
        }
        env.append(("AWS_ACCESS_KEY_ID", options.s3AccessKey))
        env.append(("AWS_SECRET_ACCESS_KEY", options.s3SecretKey))
        env.append(("AWS_REGION", options.s3Region))
        env.append(("GCLOUD_PROJECT", options.project))
        return env
    }

    static func printBanner(options: StartOptions, ready: JSON) {
        var out = ""
        if let services = ready["services"]?.objectValue {
            for (name, s) in services {
                out += "hearth: \(name.padding(toLength: 9, withPad: " ", startingAt: 0)) \(s["url"]?.stringValue ?? "")\n"
            }
        }
        out += "hearth: \("rules".padding(toLength: 9, withPad: " ", startingAt: 0)) \(options.rulesChoice.banner)\n"
        out += "hearth: storage rules \(options.storageRulesChoice.storageBanner)\n"
        if let env = ready["env"]?.objectValue {
            for (k, v) in env { out += "export \(k)=\(v.stringValue ?? "")\n" }
        }
        StandardStream.write(out, to: StandardStream.output)
    }

    static func writeAtomically(_ text: String, to path: String) throws {
        let tmp = path + ".tmp-\(getpid())"
        try Data(text.utf8).write(to: URL(fileURLWithPath: tmp))
        guard rename(tmp, path) == 0 else { throw StartupError(description: String(cString: strerror(errno))) }
    }

    /// Returns on SIGINT or SIGTERM, or, when watchingParent, once the parent process is gone (its
    /// children are re-parented, so getppid() changes): a test harness that crashes or is killed
    /// with SIGKILL cannot forward a signal, and its hearth would otherwise keep running.
    static func fail(_ message: String) {
        StandardStream.write("hearth: \(message)\n", to: StandardStream.error)
    }
}

/// Listener addresses, filled in as servers start (the hub's `/emulators` reads it).
final class ListenerRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(name: String, host: String, port: Int)] = []
    func add(_ name: String, _ host: String, _ port: Int) {
        lock.lock()
        entries.append((name, host, port))
        lock.unlock()
    }
    var all: [(name: String, host: String, port: Int)] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}
