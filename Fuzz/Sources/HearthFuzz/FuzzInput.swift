/// Reads a fuzz input as a stream of choices, for targets that build structured values (values
/// to order, request sequences) from the bytes. Past the end every read is 0, so any input,
/// however short, describes one complete case.
struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = Array(bytes) }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A choice in `0..<n`.
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(byte()) % n }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Eight bytes, big-endian.
    mutating func uint64() -> UInt64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte()) }
        return v
    }

    /// One of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

    /// Up to `max` bytes taken as they are (a length byte first).
    mutating func raw(max: Int) -> [UInt8] {
        let n = below(max + 1)
        var out: [UInt8] = []
        out.reserveCapacity(n)
        for _ in 0..<n where !isAtEnd { out.append(byte()) }
        return out
    }
}
