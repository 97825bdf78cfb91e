import Foundation

/// A string that equals, hashes and sorts by its UTF-8 bytes.
///
/// Swift's `String` compares and hashes by canonical equivalence: "é" precomposed (NFC, U+00E9) and
/// decomposed (NFD, "e" U+0301) are `==` and hash alike. Firestore (and Cloud Storage, S3) keep
/// them apart — two field names, two document IDs, two unequal values — and an iOS app meets NFD
/// text for real (file names, some keyboards' input). Keyed by a `String`, a map with both names
/// kept one value and a cache handed one document's data to the other's reader; keyed by this,
/// they stay two. For ASCII the answers are the same as `String`'s (whose `==` is then a byte
/// comparison too), at about the same cost: one length check and a loop over the bytes.
public struct ExactString: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let string: String

    @inlinable
    public init(_ string: String) { self.string = string }

    @inlinable
    public init(stringLiteral value: String) { self.string = value }

    public var description: String { string }

    @inlinable
    public static func == (a: ExactString, b: ExactString) -> Bool { equal(a.string, b.string) }

    @inlinable
    public static func < (a: ExactString, b: ExactString) -> Bool { compare(a.string, b.string) < 0 }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        if string.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            var s = string  // not contiguous (never for Swift-native strings): the same bytes, copied
            s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Whether `a` and `b` are the same UTF-8 bytes (not merely canonically equivalent).
    /// Whether two strings are represented by the same two words: one small string's inline bytes,
    /// or one storage at one length (a storage two live strings share is never changed in place) —
    /// then they are the same bytes. False says nothing: equal bytes may be spelled with other words
    /// (one string small, the other stored with spare capacity).
    @inlinable @inline(__always)
    public static func sameWords(_ a: String, _ b: String) -> Bool {
        unsafeBitCast(a, to: (UInt, UInt).self) == unsafeBitCast(b, to: (UInt, UInt).self)
    }

    /// Whether both strings are small: their at most 15 UTF-8 bytes held in their own two words
    /// (first byte lowest, the second word's top byte the discriminator with the count), the unused
    /// bytes zero and the ASCII flag worked out from the bytes (the standard library's
    /// `_SmallString` invariants) — so two small strings are the same bytes exactly when their words
    /// are the same, and their words order as their bytes. Comparing field names and path segments
    /// (mostly small) through `withContiguousStorageIfAvailable` copied each to the stack first: a
    /// REST commit's 27 compares were 1.6k instructions of their own (docs/benchmarks.md, commit38).
    /// False on other layouts.
    @inlinable @inline(__always)
    public static func bothSmall(_ a: String, _ b: String) -> Bool {
        #if _endian(little) && _pointerBitWidth(_64)
        // The discriminator's "small" bit (bit 61 of the second word); large strings, native or
        // immortal, have it clear.
        return unsafeBitCast(a, to: (UInt64, UInt64).self).1 & unsafeBitCast(b, to: (UInt64, UInt64).self).1 & (1 << 61) != 0
        #else
        return false
        #endif
    }

    /// Lengths first (O(1) for native strings): most unequal names differ in length. The bytes
    /// are read in place (`withContiguousStorageIfAvailable`, not the mutating `withUTF8` of a
    /// copy, which cost half as much again) and compared in a loop, not by `memcmp`: names are
    /// short, and the call cost more than the loop (callgrind, docs/benchmarks.md *Byte-string keys*).
    @inlinable
    public static func equal(_ a: String, _ b: String) -> Bool {
        // Equal short names (field names, path segments: mostly small strings) end here; reading
        // the bytes of two small strings through `withContiguousStorageIfAvailable` cost ~120
        // instructions.
        if sameWords(a, b) { return true }
        // Two small strings are equal bytes only in equal words (`bothSmall`).
        if bothSmall(a, b) { return false }
        guard a.utf8.count == b.utf8.count else { return false }
        let same = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                // Long strings (a kilobyte bearer token, compared on every REST request by the
                // caller and request-log caches) by `memcmp`: a byte loop cost ~4 instructions a
                // byte where `String`'s own `==` of two ASCII strings is a `memcmp` too.
                // Below 64 bytes (names, path segments) the call costs more than the loop.
                if x.count >= 64 {
                    return memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
                }
                var i = 0
                while i < x.count {
                    if x[i] != y[i] { return false }
                    i += 1
                }
                return true
            }
        }
        if let same, let same { return same }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// `a`'s UTF-8 bytes against `b`'s, as SQLite compares TEXT (and Firestore orders strings):
    /// -1, 0 or 1, a prefix first. Over the contiguous bytes, in place (see `equal`): the generic
    /// `lexicographicallyPrecedes` of two `UTF8View`s stepped through string indices.
    @inlinable
    public static func compare(_ a: String, _ b: String) -> Int {
        if sameWords(a, b) { return 0 }
        #if _endian(little) && _pointerBitWidth(_64)
        if bothSmall(a, b) {
            // The bytes in the words, first byte lowest: byte-swapped, the words order as the bytes
            // do. The top byte of the second word is the discriminator and count, not a byte; the
            // unused bytes are zero, so equal words up to there leave one string a prefix of the
            // other (padded with zeros, or its own zero bytes): the shorter first.
            let x = unsafeBitCast(a, to: (UInt64, UInt64).self), y = unsafeBitCast(b, to: (UInt64, UInt64).self)
            if x.0 != y.0 { return x.0.byteSwapped < y.0.byteSwapped ? -1 : 1 }
            let p = (x.1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped, q = (y.1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped
            if p != q { return p < q ? -1 : 1 }
            let m = x.1 >> 56 & 0xF, n = y.1 >> 56 & 0xF
            return m == n ? 0 : (m < n ? -1 : 1)
        }
        #endif
        let order = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                let n = Swift.min(x.count, y.count)
                var i = 0
                while i < n {
                    if x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
                    i += 1
                }
                return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
            }
        }
        if let order, let order { return order }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    /// Whether two lists of strings are the same bytes element by element (a path's segments).
    @inlinable
    public static func equal(_ a: [String], _ b: [String]) -> Bool {
        guard a.count == b.count else { return false }
        for i in a.indices where !equal(a[i], b[i]) { return false }
        return true
    }
}
