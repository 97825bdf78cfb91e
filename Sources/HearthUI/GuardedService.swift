import HearthHTTP

/// An `HTTPService` that answers only what its `HostGuard` lets through.
public struct GuardedService: HTTPService {
    let inner: any HTTPService
    let hostGuard: HostGuard

    /// Wraps `inner` in `hostGuard`.
    public init(_ inner: any HTTPService, guard hostGuard: HostGuard) {
        self.inner = inner
        self.hostGuard = hostGuard
    }

    public func dispose(_ request: Request) -> RequestDisposition {
        if let reason = hostGuard.refusal(for: request) { return .respond(hostGuard.response(for: reason)) }
        return inner.dispose(request)
    }
}
