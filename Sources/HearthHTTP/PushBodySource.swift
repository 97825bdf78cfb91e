import Foundation

/// A response body whose bytes arrive over time (server-sent events), served without a thread
/// waiting for them.
///
/// The server asks for bytes with `next(into:)`. When the source has none it answers `.wait`, and
/// the server parks the connection (libmicrohttpd's suspend: no worker thread is held) until the
/// source calls the `PushWaker` it was given in `attach(_:)`. A listener serves push bodies only
/// when its configuration sets `allowsPush`.
public protocol PushBodySource: AnyObject, Sendable {
    /// Called once, before the first `next`: the waker to call whenever new bytes are ready (or
    /// the stream should end). Calling it more often than needed is harmless.
    func attach(_ waker: PushWaker)
    /// Fills `buffer` with the next bytes.
    func next(into buffer: UnsafeMutableRawBufferPointer) -> PushRead
    /// Called once when the response is done, the client went away, or the server stops.
    func close()
}

/// What a `PushBodySource` has now.
public enum PushRead: Sendable, Equatable {
    /// This many bytes were written into the buffer (more than zero).
    case bytes(Int)
    /// Nothing now; the source calls its waker when there is.
    case wait
    /// The body is complete.
    case end
}

/// Wakes a parked push response (`PushBodySource.attach`).
public final class PushWaker: @unchecked Sendable {
    private let action: @Sendable () -> Void

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// New bytes are ready (or the stream is over): the server asks for them soon.
    public func wake() { action() }
}
