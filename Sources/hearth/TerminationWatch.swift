import Dispatch
import Foundation

/// SIGINT, SIGTERM and (with `--exit-with-parent`) the parent's exit, watched from process start.
///
/// Created before anything else so that no signal is lost between start-up and the wait: the
/// semaphore keeps a signal that arrives early, and `wait()` returns at once for it. A start-up that
/// fails returns from `run` without waiting, and the process exits as before.
final class TerminationWatch: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []
    private var timer: (any DispatchSourceTimer)?

    init(watchingParent: Bool) {
        let done = self.done
        for sig in [SIGINT, SIGTERM] {
            // The dispatch source sees the signal only once its default action (terminate) is off;
            // the source is resumed right after, so the window between the two is instructions long.
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            sources.append(source)
        }
        if watchingParent {
            let parent = getppid()
            let t = DispatchSource.makeTimerSource(queue: .global())
            t.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
            t.setEventHandler {
                if getppid() != parent { done.signal() }
            }
            t.resume()
            timer = t
        }
    }

    /// Blocks until a termination signal arrived (now or at any time since `init`).
    func wait() {
        done.wait()
        timer?.cancel()
    }
}
