import HearthHTTP
import Testing
@testable import HearthUI

@Suite struct HostGuardTests {
    static let hostGuard = HostGuard(boundHost: "0.0.0.0", publicHost: "192.168.1.20", originPorts: { [4000, 4400] })

    static func request(_ method: String = "GET", host: String?, origin: String? = nil) -> Request {
        var headers = HTTPHeaders()
        if let host { headers.add("Host", host) }
        if let origin { headers.add("Origin", origin) }
        return Request(method: method, target: "/emulator/v1/reset", headers: headers)
    }

    @Test(arguments: ["127.0.0.1:4400", "localhost:4000", "LOCALHOST", "localhost.:4000", "[::1]:4400", "192.168.1.20:4000", "127.0.0.1"])
    func hostsHearthIsReachableAtPass(host: String) {
        #expect(Self.hostGuard.refusal(for: Self.request(host: host)) == nil)
    }

    @Test(arguments: ["evil.example:4000", "attacker.com", "0.0.0.0:4000", "127.0.0.1.evil.com", "localhost:4000:1", "[::1", "", "192.168.1.21:4000"])
    func otherHostsAreRefused(host: String) {
        let reason = Self.hostGuard.refusal(for: Self.request(host: host))
        #expect(reason?.contains("DNS-rebinding") == true, "\(host): \(reason ?? "allowed")")
    }

    @Test func aRequestWithoutHostIsNoBrowsersAndPasses() {
        // HTTP/1.0 health probes (the Docker healthcheck) send none; browsers always do.
        #expect(Self.hostGuard.refusal(for: Self.request(host: nil)) == nil)
        #expect(Self.hostGuard.refusal(for: Self.request("POST", host: nil, origin: "https://evil.example")) != nil)
    }

    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE"])
    func stateChangesFromForeignOriginsAreRefused(method: String) {
        for origin in ["https://evil.example", "http://localhost:3000", "null", "http://127.0.0.1.evil.com:4000", "file://", "http://localhost:4000/x"] {
            let reason = Self.hostGuard.refusal(for: Self.request(method, host: "127.0.0.1:4400", origin: origin))
            #expect(reason?.contains("cross-site request refused") == true, "\(method) from \(origin): \(reason ?? "allowed")")
        }
    }

    @Test(arguments: ["POST", "DELETE"])
    func stateChangesFromHearthsOwnPagesOrWithoutOriginPass(method: String) {
        for origin in [nil, "http://127.0.0.1:4000", "http://localhost:4400", "http://[::1]:4000", "http://192.168.1.20:4000"] {
            #expect(Self.hostGuard.refusal(for: Self.request(method, host: "localhost:4400", origin: origin)) == nil, "\(origin ?? "none")")
        }
    }

    @Test func readsFromForeignOriginsAreNotRefusedByOrigin() {
        // The browser keeps a cross-origin GET's answer from the page (no CORS headers); the Host check still applies.
        #expect(Self.hostGuard.refusal(for: Self.request("GET", host: "127.0.0.1:4400", origin: "https://evil.example")) == nil)
        #expect(Self.hostGuard.refusal(for: Self.request("GET", host: "evil.example", origin: "https://evil.example")) != nil)
    }

    @Test func guardedServiceAnswers403WithTheReasonAndNeverCallsTheService() {
        let router = Router()
        router.post("/emulator/v1/reset") { _, _ in Issue.record("the service was called"); return .text("reset") }
        let service = GuardedService(router, guard: Self.hostGuard)
        guard case .respond(let r) = service.dispose(Self.request("POST", host: "rebound.example:4400")) else {
            Issue.record("expected an immediate answer")
            return
        }
        #expect(r.status == 403)
        let body = String(decoding: r.bodyBytes ?? [], as: UTF8.self)
        #expect(body.contains("PERMISSION_DENIED") && body.contains("rebound.example:4400"))
    }

    @Test func theWildcardBindAddressIsNotAnAllowedHost() {
        #expect(!Self.hostGuard.allowedHosts.contains("0.0.0.0"))
        let specific = HostGuard(boundHost: "10.0.0.5", publicHost: "10.0.0.5", originPorts: { [] })
        #expect(specific.refusal(for: Self.request(host: "10.0.0.5:4400")) == nil)
    }
}
