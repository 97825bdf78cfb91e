import HearthCore
import HearthHTTP

/// Streams a request body into a Storage blob writer and hands it to `finish` when complete;
/// bytes before `skip` are dropped (a resumable chunk that repeats bytes already persisted).
/// A client that goes away leaves nothing behind: the staged chunks are deleted.
final class BlobUploadConsumer: RequestBodyConsumer {
    typealias Finish = (_ writer: StorageBlobWriter) -> Response

    private let writer: StorageBlobWriter
    private let finishHandler: Finish
    private let onError: (any Error) -> Response
    private let onAbandon: () -> Void
    private var skip: Int64
    private let digest: ObjectDigest?
    private var failure: (any Error)?
    /// Body bytes received (skipped ones included).
    private(set) var received: Int64 = 0

    /// - Parameters:
    ///   - digest: sees every kept byte, in order, on this thread just before it is stored (a hashing
    ///     thread beside this one made 1 GiB uploads 18–61 % slower on a 2-core machine, where the
    ///     client, this thread and the hasher contend; docs/benchmarks.md, *Two wall-clock drops*);
    ///     complete when `finish`, `onError` or `onAbandon` runs. The writer computes no digest:
    ///     a resumable chunk's bytes go to the session's running digest (or none, and finalize
    ///     reads the pieces back), a one-shot upload's to its own.
    init(service: StorageService, skip: Int64 = 0, digest: ObjectDigest?,
         finish: @escaping Finish, onError: @escaping (any Error) -> Response, onAbandon: @escaping () -> Void = {}) {
        self.onAbandon = onAbandon
        self.digest = digest
        writer = StorageBlobWriter(database: service.database, now: service.clock.now(), checksums: []).withoutDigests()
        self.skip = skip
        finishHandler = finish
        self.onError = onError
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        received += Int64(chunk.count)
        guard failure == nil else { return }
        var bytes = chunk
        if skip > 0 {
            let n = Int(min(skip, Int64(bytes.count)))
            skip -= Int64(n)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[n...])
        }
        digest?.update(bytes)
        do { try writer.append(bytes) } catch {
            failure = error
            writer.discard()
        }
    }

    func finish() -> Response {
        if let failure { return onError(failure) }
        let response = finishHandler(writer)
        // The handler commits (and calls `committed()`) or leaves the bytes to be discarded.
        writer.discard()
        return response
    }

    func abandon() {
        writer.discard()
        onAbandon()
    }
}
