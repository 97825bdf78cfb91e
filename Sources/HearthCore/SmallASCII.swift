import Foundation

/// Strings of at most 15 ASCII bytes made in place: the names, ids and short values a request's
/// parsers take out of its bytes (field names, path segments, header names and values).
///
/// `String(decoding:as:)` validates the bytes as UTF-8 and then forms the string, ~165 instructions
/// for a field name; a REST commit made ~30 such strings (docs/benchmarks.md, commit38). Up to 15
/// bytes a string is small: its bytes are its own two words, first byte lowest, the unused bytes
/// zero, the second word's top byte the discriminator (0xE0 for ASCII) with the count. Bytes that
/// are all ASCII need no validation, so those words are written directly — the very string
/// `String(decoding:as:)` makes (`SmallASCIITests` compares the words for every length). Anything
/// longer, non-ASCII, or on another layout is left to `String(decoding:as:)`.
public enum SmallASCII {
    /// The string of `bytes` (UTF-8, repaired as `String(decoding:as:)` repairs it).
    @inlinable
    public static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        #if _endian(little) && _pointerBitWidth(_64)
        let n = bytes.count
        if n <= 15 {
            var raw: (UInt64, UInt64) = (0, 0)
            if n > 0 { withUnsafeMutableBytes(of: &raw) { $0.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: n) } }
            if (raw.0 | raw.1) & 0x8080_8080_8080_8080 == 0 {
                return unsafeBitCast((raw.0, raw.1 | (0xE0 | UInt64(n)) << 56), to: String.self)
            }
        }
        #endif
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `string(_:)` of a buffer of bytes.
    @inlinable
    public static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        string(UnsafeRawBufferPointer(bytes))
    }
}
