/// Work an object queues on its event loop's thread to run after the current handler
/// (`EventLoop.executeSoon`, `HTTP2Stream.afterCurrentRead`), queued as the object itself.
///
/// Queued as a closure (`{ [self] in flushDirty() }`), the same work allocated a closure context
/// each time and freed it after the pass: a connection's flush and a read's batch of quick calls
/// are queued once per unary gRPC call (~0.6k instructions a get; callgrind,
/// bench/callgrind_get.py). Queuing the object retains it, and nothing is allocated.
public protocol EventLoopTask: AnyObject {
    /// Runs on the loop thread, after the handler that queued it, before the loop waits again.
    func runOnLoop()
}
