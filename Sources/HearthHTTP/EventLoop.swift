import Foundation
import HearthCore
import Synchronization
internal import CLinuxIO

/// One thread waiting in `epoll_wait`: it runs the handlers of registered sockets and the tasks
/// other threads queue with `execute`.
///
/// Everything registered on a loop is touched only by its thread, which is how an nghttp2 session
/// (not thread-safe) stays confined. Other threads reach it through `execute`, which queues a task
/// and wakes the loop through an eventfd.
final class EventLoop: @unchecked Sendable {
    /// Called with the epoll event mask of a ready socket.
    typealias Handler = (UInt32) -> Void

    let name: String
    private let epollFD: Int32
    private let wakeFD: Int32
    // Loop thread only, as `soon`, `busyPoll` and `answersAwaited` below: unchecked, they cost no
    // runtime exclusivity check (swift_beginAccess) at each of the several accesses a pass makes.
    @exclusivity(unchecked) private var handlers: [Int32: Handler] = [:]
    private let taskLock = InlineLock()
    // Under `taskLock`.
    @exclusivity(unchecked) private var tasks: [@Sendable () -> Void] = []
    /// Tasks the loop thread queued for itself (loop thread only): no lock, no wake-up.
    @exclusivity(unchecked) private var soon: [any EventLoopTask] = []
    /// The receive buffer every socket on this loop reads into (loop thread only): one per loop, not
    /// one per read (a fresh zeroed 32 KiB array cost a `memset` per read) nor per connection.
    private var scratchStorage: UnsafeMutableBufferPointer<UInt8>?
    /// Where a connection on this loop gathers the frames of one pass before writing them (loop
    /// thread only; `HTTP2Connection.send`): one per loop, so a connection's own buffer holds only
    /// what its socket did not take.
    private var sendStorage: UnsafeMutableBufferPointer<UInt8>?
    private var stopping = false
    private var thread: Thread?
    /// The loop thread's `pthread_self()` while `run` runs, else 0: `isLoopThread` compares it with
    /// the caller's. `Thread.current === thread` cost ~150 instructions (Foundation's thread-specific
    /// lookup and a retain and release of the `Thread`), twice per unary gRPC call.
    private let runningThread = Atomic<UInt>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// Run after every wake-up on the loop thread; returns how long the next wait may last in ms
    /// (-1: until an event). Timers (the sniff time limit) live here.
    var tick: () -> Int32 = { -1 }
    /// How long the loop polls before it sleeps (set before `start`; then loop thread only). Off
    /// unless the owner turns it on: the HTTP/2 loops do (`HTTP2Engine`), the accept loop does not.
    @exclusivity(unchecked) var busyPoll = BusyPoll(ceilingMicroseconds: 0)
    /// Requests on this loop's connections that the client has sent whole and that wait for an
    /// answer from another thread of this process (loop thread only; `HTTP2Connection` counts
    /// them). While any waits, the loop sleeps at once when it runs out of work: the next event is
    /// most likely that answer, which polling cannot bring sooner — it only takes a CPU from the
    /// thread making it (a RunQuery on a worker, a commit on the writer) and from the client.
    @exclusivity(unchecked) var answersAwaited = 0
    /// Sockets registered with `readsAhead` (loop thread only), and whether their interest
    /// includes EPOLLIN now: a socket whose owner stopped reading (a client that does not read its
    /// answers) is never read ahead.
    @exclusivity(unchecked) private var readers: [Int32: Bool] = [:]
    /// The socket the polling reads itself, before asking epoll (loop thread only; -1: none): the
    /// last one whose request alone ended a pause. A client calling one call at a time sends on
    /// the same connection each time, and a read that finds its request takes it with one system
    /// call where `epoll_wait` reporting it, then the handler's `recv`, took two on the way to the
    /// answer (docs/benchmarks.md, grpcs1y).
    @exclusivity(unchecked) private var probed: Int32 = -1
    /// While a socket is read ahead, the polling asks epoll once in this many rounds.
    static let epollRounds = 4
    /// What the polling's read of `probed` gave (bytes in `scratch`, or -1 and its errno), for
    /// that socket's handler to take (`takeReadAhead`) instead of reading itself (loop thread only).
    @exclusivity(unchecked) private var readAhead: (fd: Int32, result: Int, error: Int32)?

    init(name: String) throws(HTTPServerError) {
        self.name = name
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard epollFD >= 0, wakeFD >= 0 else {
            let reason = String(cString: strerror(errno))
            if epollFD >= 0 { close(epollFD) }
            if wakeFD >= 0 { close(wakeFD) }
            throw .startFailed(host: "", port: 0, reason: "epoll: \(reason)")
        }
        hearth_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, hearth_epollin())
    }

    deinit {
        scratchStorage?.deallocate()
        sendStorage?.deallocate()
        close(epollFD)
        close(wakeFD)
    }

    func start() {
        // Weak: the Thread keeps its closure after `run` returns, so a strong capture made every
        // stopped loop immortal (its buffer, epoll and eventfd descriptors; LeakSanitizer's report).
        // While `run` executes, the call holds the loop.
        let thread = Thread { [weak self] in self?.run() }
        thread.name = name
        // Loop threads only shuffle bytes; a small stack keeps idle RSS and address space low.
        thread.stackSize = 256 << 10
        self.thread = thread
        thread.start()
    }

    /// Queues `task` for the loop thread. Safe from any thread; tasks run in the order queued.
    /// Inside a `HeldWakeUps.batch` scope the wake-up waits for the scope's end (a batch of answers
    /// wakes the loop once).
    func execute(_ task: @escaping @Sendable () -> Void) {
        taskLock.lock()
        let wasEmpty = tasks.isEmpty
        tasks.append(task)
        taskLock.unlock()
        if wasEmpty && !HeldWakeUps.hold(ObjectIdentifier(self), { [self] in wake() }) { wake() }
    }

    /// Queues `task` to run on this loop thread after the current handler, before the loop waits
    /// again. Loop thread only: what a handler changes is applied once, after the handler, without
    /// the eventfd round trip `execute` costs.
    func executeSoon(_ task: any EventLoopTask) {
        soon.append(task)
    }

    /// A buffer for reading a socket (loop thread only; its bytes are valid until the next read).
    var scratch: UnsafeMutableBufferPointer<UInt8> {
        if let scratchStorage { return scratchStorage }
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 32 << 10)
        scratchStorage = b
        return b
    }

    /// The buffer frames are gathered in before a socket write (loop thread only; its bytes are
    /// valid until the next gathering). 64 KiB: a commit's snapshots for the 100 listeners a
    /// connection carries (~33 KB) leave in one write; a larger pass takes several.
    var sendBuffer: UnsafeMutableBufferPointer<UInt8> {
        if let sendStorage { return sendStorage }
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 64 << 10)
        sendStorage = b
        return b
    }

    /// Ends the loop after the tasks queued so far and waits for its thread (never call it on the loop).
    func stop() {
        taskLock.lock()
        let wasStopping = stopping
        stopping = true
        taskLock.unlock()
        guard !wasStopping, thread != nil else { return }
        wake()
        finished.wait()
    }

    /// Relaxed: only the loop thread itself stores its id, and it always sees its own store; any
    /// other thread reads 0 or the loop's id, never its own.
    var isLoopThread: Bool { runningThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    // MARK: Loop-thread only

    /// Watches `fd` for `events` (EPOLLIN, EPOLLOUT, …). `readsAhead`: the polling may read the
    /// socket into `scratch` itself, and its handler then takes that read (`takeReadAhead`)
    /// instead of calling `recv`, whenever it is called with EPOLLIN.
    func register(_ fd: Int32, events: UInt32, readsAhead: Bool = false, handler: @escaping Handler) {
        handlers[fd] = handler
        if readsAhead { readers[fd] = events & hearth_epollin() != 0 }
        hearth_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events)
    }

    func modify(_ fd: Int32, events: UInt32) {
        if readers[fd] != nil {
            let reading = events & hearth_epollin() != 0
            readers[fd] = reading
            if !reading && probed == fd { probed = -1 }
        }
        hearth_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events)
    }

    /// Stops watching `fd` (the caller closes or hands it on).
    func unregister(_ fd: Int32) {
        handlers[fd] = nil
        readers[fd] = nil
        if probed == fd { probed = -1 }
        if readAhead?.fd == fd { readAhead = nil }
        hearth_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0)
    }

    /// The read the polling made of `fd` for its handler, now being called: the `recv` result (its
    /// bytes in `scratch`) and, when it is -1, its errno. Nil: the handler reads itself.
    func takeReadAhead(_ fd: Int32) -> (result: Int, error: Int32)? {
        guard let ahead = readAhead, ahead.fd == fd else { return nil }
        readAhead = nil
        return (ahead.result, ahead.error)
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// `epoll_wait`, after polling for the busy-poll window when the wait may last (loop thread).
    private func pollThenWait(_ events: inout [hearth_event], timeout: Int32) -> Int32 {
        // A timer already due: nothing to wait for, and no pause to learn from.
        if timeout == 0 { return hearth_epoll_wait(epollFD, &events, Int32(events.count), 0) }
        let idle = Clock.monotonicNanos()
        let window = busyPoll.beginPause()
        if window > 0 {
            var round = 0
            while true {
                // Not in the first round, which asks epoll about every socket: a client keeping its
                // socket readable (a large upload, a flood) would otherwise be read at every pause
                // while the loop's other sockets waited.
                if round > 0 && probed >= 0 && readAheadFound(&events) {
                    busyPoll.endPause(after: Clock.monotonicNanos() &- idle, bySocket: true, whilePolling: true)
                    return 1
                }
                // With a socket read ahead, epoll is asked every `epollRounds`-th round only (the
                // first included): the other sockets and the eventfd wait at most that many rounds
                // (a few µs), and each round is one system call shorter, so the request comes
                // sooner after it arrives.
                if probed < 0 || round % Self.epollRounds == 0 {
                    let n = hearth_epoll_wait(epollFD, &events, Int32(events.count), 0)
                    if n != 0 {
                        busyPoll.endPause(after: Clock.monotonicNanos() &- idle,
                                          bySocket: endedBySocket(events, n), whilePolling: true)
                        chooseProbed(events, n)
                        return n
                    }
                }
                round &+= 1
                if Clock.monotonicNanos() &- idle >= window { break }
                // Whatever else is runnable on this CPU goes first: the polling takes only time
                // nobody else wanted.
                sched_yield()
            }
        }
        let n = hearth_epoll_wait(epollFD, &events, Int32(events.count), timeout)
        busyPoll.endPause(after: Clock.monotonicNanos() &- idle,
                          bySocket: endedBySocket(events, n), whilePolling: false)
        chooseProbed(events, n)
        return n
    }

    /// One non-blocking read of `probed` while polling: true when it found something (bytes, the
    /// client's close, an error), kept in `readAhead` and reported as that socket's EPOLLIN event,
    /// alone in `events`; false when the socket had nothing yet.
    private func readAheadFound(_ events: inout [hearth_event]) -> Bool {
        let buffer = scratch
        let result = recv(probed, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        let error = result < 0 ? errno : 0
        if result < 0 && (error == EAGAIN || error == EWOULDBLOCK || error == EINTR) { return false }
        readAhead = (probed, result, error)
        events[0] = hearth_event(fd: probed, events: hearth_epollin())
        return true
    }

    /// The socket to read ahead in the next pauses: the one whose readiness alone ended this one,
    /// when its handler takes reads ahead and it is being read (else the choice stays).
    private func chooseProbed(_ events: [hearth_event], _ n: Int32) {
        guard n == 1 else { return }
        let fd = events[0].fd
        guard fd != probed, fd != wakeFD, events[0].events == hearth_epollin(), readers[fd] == true else { return }
        probed = fd
    }

    /// Whether a socket was among the `n` events, not only the eventfd: a pause ended by the
    /// eventfd alone was a wait for this process's own threads (a write's group commit, a handler
    /// on a worker), not for a client.
    private func endedBySocket(_ events: [hearth_event], _ n: Int32) -> Bool {
        for i in 0..<Int(max(n, 0)) where events[i].fd != wakeFD { return true }
        return false
    }

    private func run() {
        ThreadName.setCurrent(name)
        runningThread.store(UInt(pthread_self()), ordering: .relaxed)
        // A later thread may be given the same id.
        defer { runningThread.store(0, ordering: .relaxed) }
        var events = [hearth_event](repeating: hearth_event(), count: 64)
        // The `soon` tasks being run: swapped with `soon` so that neither array is reallocated per
        // pass (emptied from `[]`, each pass's first task regrew it: an allocation and a free per call).
        var running: [any EventLoopTask] = []
        var timeout: Int32 = -1
        // Work scheduled for the end of a pass (the rules coverage fold of a batch of calls judged
        // here) runs after the pass's answers left.
        let passEnd = PassEndWork()
        passEnd.install()
        defer { passEnd.uninstall() }
        while true {
            // A pause spent waiting for this process's own threads neither polls nor teaches the
            // window anything about the client's round trip.
            let n = busyPoll.isOff || answersAwaited > 0 ? hearth_epoll_wait(epollFD, &events, Int32(events.count), timeout)
                : pollThenWait(&events, timeout: timeout)
            if n > 0 {
                for i in 0..<Int(n) {
                    let fd = events[i].fd
                    if fd == wakeFD {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                        continue
                    }
                    // A handler may have closed an fd reported in this batch: look it up each time.
                    handlers[fd]?(events[i].events)
                }
                // Taken by its handler; should that handler be gone, the bytes go with it.
                readAhead = nil
            }
            taskLock.lock()
            let queued = tasks
            tasks = []
            let stop = stopping
            taskLock.unlock()
            for task in queued { task() }
            while !soon.isEmpty {
                swap(&soon, &running)
                for task in running { task.runOnLoop() }
                running.removeAll(keepingCapacity: true)
            }
            timeout = tick()
            passEnd.run()
            if stop { break }
        }
        handlers = [:]
        finished.signal()
    }
}
