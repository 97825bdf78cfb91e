internal import CNGHTTP2

/// The nghttp2 buffers a connection's last request header fields were read from, field by field,
/// each held by one reference of ours (`nghttp2_rcbuf_incref`), so that the next request's field in
/// the same place is known to be the same bytes by the buffers' addresses alone.
///
/// nghttp2 hands a field it takes from its HPACK table (the static one, or the connection's dynamic
/// one) in that table entry's own buffers, and a client repeating its fields sends them as indexes
/// into the table: call after call the same field arrives in the same buffers. A buffer we hold is
/// neither freed nor changed, so an address seen again is the same bytes — where comparing the bytes
/// with the kept string's (`HTTP2FieldText.matches`: the string's contiguous UTF-8 found, a small
/// string copied out, a `memcmp`) cost ~150 instructions per field, ~10 fields a gRPC call. A field
/// sent as a literal (nghttp2's own encoder never indexes `:path` or `authorization`) comes in new
/// buffers each time and is compared by its bytes as before.
///
/// The buffers are freed through their session's allocator: `removeAll` before `nghttp2_session_del`.
struct HTTP2FieldBuffers {
    private var buffers: [(name: OpaquePointer, value: OpaquePointer)] = []

    /// Whether field `i`'s name and value were read from these very buffers.
    func same(_ i: Int, name: OpaquePointer, value: OpaquePointer) -> (name: Bool, value: Bool) {
        guard i < buffers.count else { return (false, false) }
        return buffers.withUnsafeBufferPointer { ($0[i].name == name, $0[i].value == value) }
    }

    /// A field read from `name` and `value` follows the others.
    mutating func append(name: OpaquePointer, value: OpaquePointer) {
        nghttp2_rcbuf_incref(name)
        nghttp2_rcbuf_incref(value)
        buffers.append((name, value))
    }

    /// Field `i` was read from `name` and `value` (the next one when `i` is past the last).
    mutating func replace(_ i: Int, name: OpaquePointer, value: OpaquePointer) {
        guard i < buffers.count else { return append(name: name, value: value) }
        // Held first: either may be the one let go below.
        nghttp2_rcbuf_incref(name)
        nghttp2_rcbuf_incref(value)
        let old = buffers[i]
        buffers[i] = (name, value)
        nghttp2_rcbuf_decref(old.name)
        nghttp2_rcbuf_decref(old.value)
    }

    /// The fields from `count` on are gone.
    mutating func truncate(to count: Int) {
        while buffers.count > count {
            let last = buffers.removeLast()
            nghttp2_rcbuf_decref(last.name)
            nghttp2_rcbuf_decref(last.value)
        }
    }

    /// Every field is gone.
    mutating func removeAll() { truncate(to: 0) }
}
