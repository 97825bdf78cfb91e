import Foundation
import HearthCore
import HearthHTTP
import HearthUI

/// Wires the web UI (`HearthUI`): its listener, the request log around every service, the
/// Host/Origin guard on the hub and the UI, and the hub routes the UI reads.
enum WebUI {
    /// Who may talk to the hub and the UI from a browser (`docs/ui.md`, *Safety*).
    static func hostGuard(_ o: StartOptions, _ registry: ListenerRegistry) -> HostGuard {
        HostGuard(boundHost: o.host, publicHost: o.advertisedHost,
                  originPorts: { Set(registry.all.filter { $0.name == "hub" || $0.name == "ui" }.map(\.port)) })
    }

    /// `GET /emulator/v1/status` (the ready JSON) and the request log's routes.
    static func registerHubRoutes(_ hub: Router, log: RequestLog, status: ReadyStatus, events: LiveEvents) {
        log.registerHubRoutes(hub)
        events.registerHubRoutes(hub)
        hub.get("/emulator/v1/status") { _, _ in
            guard let json = status.json else {
                return .json(Hub.errorBody(503, "UNAVAILABLE", "hearth is still starting"), status: 503)
            }
            return .json(json)
        }
    }

    /// The UI listener: assets, plus the hub and every started service mounted under its name.
    static func makeServer(_ o: StartOptions, hub: Router, started: [(ServiceUnit, Int)], guard hostGuard: HostGuard,
                           ids: IDGenerator, clock: Clock) -> HTTPServer {
        var mounts = [UIService.Mount(prefix: "hub", service: hub, host: "\(o.advertisedURLHost):0")]
        for (unit, port) in started {
            mounts.append(UIService.Mount(prefix: unit.name, service: unit.http, host: "\(o.advertisedURLHost):\(port)"))
        }
        // No request lines: the open pages poll every second or two, which would bury the log of
        // the app's own requests (the only thing the logger writes per listener).
        var configuration = HTTPServer.Configuration(host: o.host, port: o.uiPort, threads: 4)
        // `/hub/emulator/v1/events` (server-sent events) parks its connections between events.
        configuration.allowsPush = true
        return HTTPServer(name: "ui", configuration: configuration,
                          service: GuardedService(UIService(mounts: mounts), guard: hostGuard),
                          logger: nil, ids: ids, clock: clock)
    }
}

/// The ready JSON once every listener is up (nil before), for `GET /emulator/v1/status`.
final class ReadyStatus: @unchecked Sendable {
    private let lock = NSLock()
    private var value: JSON?
    var json: JSON? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
}
