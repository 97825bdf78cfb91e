import Foundation
internal import CNGHTTP2

/// Header fields laid out once for nghttp2 — their bytes and the `nghttp2_nv` array pointing into
/// them — for fields that many responses repeat unchanged (gRPC's response headers and its OK
/// trailers). A list of strings is laid out again at every submission (`HTTP2Connection`'s
/// `withHeaderVector`): ~1.3k instructions a unary gRPC answer for its two constant blocks
/// (callgrind, bench/callgrind_get.py --width 16). nghttp2 still copies the fields it is given, so a
/// block need not outlive the frame.
public final class HTTP2HeaderBlock: @unchecked Sendable {
    /// The fields, in order (names lower-case).
    public let fields: [(String, String)]
    /// The laid-out fields (immutable after `init`: every thread may read them).
    let vector: UnsafeMutablePointer<nghttp2_nv>
    private let bytes: UnsafeMutablePointer<UInt8>

    /// Lays out `fields` (names lower-case, as HTTP/2 requires).
    public init(_ fields: [(String, String)]) {
        self.fields = fields
        let total = fields.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        bytes = .allocate(capacity: max(total, 1))
        vector = .allocate(capacity: max(fields.count, 1))
        var at = 0
        func place(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
            let start = bytes + at
            let count = text.utf8.count
            _ = UnsafeMutableBufferPointer(start: start, count: count).initialize(from: text.utf8)
            at += count
            return (start, count)
        }
        for (i, (name, value)) in fields.enumerated() {
            let (n, nl) = place(name)
            let (v, vl) = place(value)
            (vector + i).initialize(to: nghttp2_nv(name: n, value: v, namelen: nl, valuelen: vl,
                                                   flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        }
    }

    deinit {
        vector.deinitialize(count: fields.count)
        vector.deallocate()
        bytes.deallocate()
    }
}

/// Fields to submit: a list laid out at submission, or a block laid out once.
enum HTTP2Fields {
    case list([(String, String)])
    case block(HTTP2HeaderBlock)

    var isEmpty: Bool {
        switch self {
        case .list(let fields): fields.isEmpty
        case .block(let block): block.fields.isEmpty
        }
    }
}
