/// A bound on what one query may read: a query answered on an HTTP/2 loop thread (gRPC RunQuery,
/// `RESTBridge.quickRunQuery`) must stay short, since every other connection of that loop waits
/// while it runs, yet how much a query reads is known only as it reads (a walk of the order's index
/// may find its matches at once or give up for the seeks; a filter may match few of many
/// candidates; a document may be a few bytes or a mebibyte). So the executor charges each row it
/// reads — every index entry walked, every document read, with its stored fields' bytes — and stops
/// with `Exceeded` once either bound is passed; the caller then answers the query on a worker
/// thread without the cap. What the loop spent on it is bounded by the cap.
final class QueryRowCap {
    /// Thrown by `charge` once more than the cap's rows or bytes were read.
    struct Exceeded: Error {}

    private var rows: Int
    private var bytes: Int

    init(rows: Int, bytes: Int) {
        self.rows = rows
        self.bytes = bytes
    }

    /// Counts one row of `bytes` stored bytes read; throws once the cap is passed.
    func charge(bytes n: Int) throws {
        rows -= 1
        bytes -= n
        if rows < 0 || bytes < 0 { throw Exceeded() }
    }
}
