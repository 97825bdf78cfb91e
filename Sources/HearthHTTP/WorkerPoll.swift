import Foundation
import HearthCore
import Synchronization
internal import CMicroHTTPD

/// A libmicrohttpd worker thread's polling for the next request of the connection it just
/// answered, before it returns to libmicrohttpd's loop and sleeps in `epoll_wait` (listeners with
/// `HTTPServer.Configuration.http1BusyPollMicroseconds`, the Firestore listener's).
///
/// Why: a client making one request at a time (wrk at one connection, a test suite, an SDK) sends
/// its next request tens of µs after our answer. A worker asleep by then is woken by the kernel, and
/// on a virtual machine whose idle vCPU halted that wake-up is a trip through the host, which costs
/// a REST commit at one connection about as much as the serial work it waits on — the gRPC loops'
/// reason to poll (`BusyPoll`, docs/benchmarks.md grpcspin and commitc1). Polling the answered
/// connection's socket (`poll` with no timeout, `sched_yield` between) through a short window keeps
/// the vCPU running and takes the request at once; libmicrohttpd's `epoll_wait` then finds it ready.
///
/// The window is `BusyPoll`'s: adaptive (grown while the next request comes soon after the
/// answer, shrunk when it does not, 0 when idle) and tried against sleeping by turns, so that
/// polling stays only while it shortens the round trip. A pause that ends in libmicrohttpd's sleep
/// is measured at the worker's next request (`requestBegan`), which may be another connection's.
/// A worker polls only while its listener handles no other request and no other worker polls —
/// when the CPU would otherwise go idle — and stops when another request begins: with 16 busy
/// connections, 16 polling workers took the CPU the requests needed (the REST get at 16
/// connections fell ~25%, commitc1). While it polls, the worker's other connections wait for it —
/// at most one window (≤ the ceiling) per answer.
/// One per worker thread (thread-specific data), used only by that thread.
final class WorkerPoll {
    private var busy: BusyPoll
    /// When the pause under way began (0: none), measured when the next request begins.
    private var pauseStart: UInt64 = 0

    private init(ceilingMicroseconds: Int, name: String) {
        busy = BusyPoll(ceilingMicroseconds: ceilingMicroseconds, name: name)
    }

    /// Numbers the workers' records (`BusyPollRecord`) in the order their threads first poll.
    private static let numbered = Atomic<Int>(0)

    private static let perThread = ThreadLocalObject<WorkerPoll>()

    /// This thread's state (made on first use; freed when the thread ends), a worker of `server`.
    static func current(ceilingMicroseconds: Int, server: HTTPServer) -> WorkerPoll {
        perThread.current {
            let n = numbered.add(1, ordering: .relaxed).newValue
            return WorkerPoll(ceilingMicroseconds: ceilingMicroseconds, name: "\(server.name)-http1-worker-\(n)")
        }
    }

    /// A request's headers arrived on this thread at `now` (uptime nanoseconds): ends a pause
    /// that went on in libmicrohttpd's sleep.
    func requestBegan(at now: UInt64) {
        guard pauseStart != 0 else { return }
        if now > pauseStart { busy.endPause(after: now - pauseStart, bySocket: true, whilePolling: false) }
        pauseStart = 0
    }

    /// The answer on `connection` was sent: polls its socket for the next request, up to the window,
    /// while `server` handles no other request and no other worker of it polls.
    func awaitNext(_ connection: OpaquePointer, server: HTTPServer) {
        let window = busy.beginPause()
        let start = DispatchTime.now().uptimeNanoseconds
        pauseStart = start
        guard window > 0 else { return }
        let fd = hearth_mhd_connection_fd(connection)
        guard fd >= 0, server.beginPolling() else { return }
        defer { server.endPolling() }
        var socket = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&socket, 1, 0) != 0
            let now = DispatchTime.now().uptimeNanoseconds
            if ready {
                busy.endPause(after: now - start, bySocket: true, whilePolling: true)
                pauseStart = 0
                return
            }
            // Out of window, or another worker has a request (the CPU is in use, no vCPU halts): the
            // pause goes on in libmicrohttpd's sleep (`requestBegan` ends it).
            if now - start >= window || server.inFlightCount > 0 { return }
            sched_yield()
        }
    }
}
