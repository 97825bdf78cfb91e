import HearthHTTP

/// Streams a `multipart/related` upload: the metadata part is kept, the media part goes straight
/// into a Storage blob writer, so memory stays bounded by the head and one chunk whatever the size.
/// A malformed body or a client that goes away leaves nothing behind.
final class MultipartUploadConsumer: RequestBodyConsumer {
    typealias Finish = (_ parts: MultipartRelated, _ writer: StorageBlobWriter) -> Response

    private var reader: MultipartRelated
    private let writer: StorageBlobWriter
    private let finishHandler: Finish
    private let onError: (any Error) -> Response
    private var failure: (any Error)?

    init(service: StorageService, boundary: String, finish: @escaping Finish, onError: @escaping (any Error) -> Response) {
        reader = MultipartRelated(boundary: boundary)
        writer = StorageBlobWriter(database: service.database, now: service.clock.now(), checksums: [.crc32c])
        finishHandler = finish
        self.onError = onError
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do {
            try reader.feed(chunk) { media in try writer.append(media) }
        } catch {
            failure = error
            writer.discard()
        }
    }

    func finish() -> Response {
        if failure == nil {
            do throws(StorageError) { try reader.finish() } catch { failure = error }
        }
        if let failure {
            writer.discard()
            return onError(failure)
        }
        let response = finishHandler(reader, writer)
        // The handler commits (and calls `committed()`) or leaves the bytes to be discarded.
        writer.discard()
        return response
    }

    func abandon() { writer.discard() }
}
