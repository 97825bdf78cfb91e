import Foundation
import Synchronization

/// The one source of generated identifiers (document IDs, user IDs, request IDs, upload IDs, tokens).
///
/// With a seed it is a deterministic SplitMix64 stream, so two runs with the same `--seed` and the
/// same requests produce the same IDs; without one it draws from the entropy source it was given
/// (libcrypto's RAND_bytes in the `hearth` executable).
public final class IDGenerator: @unchecked Sendable {
    private let lock = NSLock()
    private var state: UInt64
    private let seeded: Bool
    private let entropy: @Sendable (Int) -> [UInt8]
    /// Request ids' own SplitMix64 state when unseeded (drawn from `entropy` on first use, under
    /// `lock`, then `requestStateReady`): request ids need to be unique, not unguessable, and one is
    /// made per request. Stepped by one atomic add, which no thread waits on: every server thread
    /// makes an id for every request, and under `lock` (an `NSLock` on purpose: the standard
    /// library's `Mutex` waits on a priority-inheritance futex that hands over in turns through the
    /// kernel, a convoy under load — docs/benchmarks.md, *Run of 5 December*) a step cost ~0.1k
    /// instructions of a gRPC get. Each add hands its caller a state of its own, as the steps under
    /// the lock did, so the ids are the same stream.
    private let requestState = Atomic<UInt64>(0)
    private let requestStateReady = Atomic<Bool>(false)
    /// Unseeded: entropy drawn ahead (guarded by `lock`), handed out from `poolNext` on, each byte
    /// once. A REST transaction's id is 24 bytes, and drawing them alone cost a call into libcrypto's
    /// generator (~6.8k instructions with its fork check, a `getpid`) per `beginTransaction`; drawn
    /// `poolSize` at a time the bytes are the same generator's output, as unguessable, for ~1/20 of that.
    private var pool: [UInt8] = []
    private var poolNext = 0
    static let poolSize = 512
    /// Requests larger than this go to `entropy` directly (the pool serves ids and tokens).
    static let pooledLimit = 64

    /// A generator; `seed` makes it reproducible.
    public init(seed: UInt64? = nil, entropy: @escaping @Sendable (Int) -> [UInt8] = IDGenerator.systemEntropy) {
        self.seeded = seed != nil
        self.state = seed ?? 0
        self.entropy = entropy
    }

    /// The operating system's generator, for callers that have nothing better.
    public static let systemEntropy: @Sendable (Int) -> [UInt8] = { count in
        var g = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    /// Whether the stream is reproducible.
    public var isSeeded: Bool { seeded }

    /// `count` bytes from the stream.
    public func bytes(_ count: Int) -> [UInt8] {
        guard seeded else { return pooled(count) }
        lock.lock()
        defer { lock.unlock() }
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            var v = nextSplitMix()
            for _ in 0..<8 where out.count < count {
                out.append(UInt8(truncatingIfNeeded: v))
                v >>= 8
            }
        }
        return out
    }

    /// `count` unseeded bytes: taken from `pool` (refilled from `entropy` when it runs short), or
    /// straight from `entropy` when larger than `pooledLimit`.
    private func pooled(_ count: Int) -> [UInt8] {
        guard count > 0, count <= Self.pooledLimit else { return entropy(count) }
        lock.lock()
        defer { lock.unlock() }
        if pool.count - poolNext < count {
            pool = entropy(Self.poolSize)
            poolNext = 0
            // A source that gave less than asked is asked for exactly what is wanted instead.
            if pool.count < count { return entropy(count) }
        }
        let out = Array(pool[poolNext..<poolNext + count])
        poolNext += count
        return out
    }

    private func nextSplitMix() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// `length` characters from `[A-Za-z0-9]`, uniformly (Firestore's auto IDs use 20).
    public func alphanumeric(_ length: Int) -> String {
        var out = [UInt8]()
        out.reserveCapacity(length)
        while out.count < length {
            for b in bytes(length) where out.count < length && b < 248 {  // 248 = 62 * 4: no modulo bias
                out.append(Self.alphanumerics[Int(b) % 62])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lower-case hex of `byteCount` random bytes.
    public func hex(byteCount: Int) -> String {
        Self.hexString(bytes(byteCount))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A request id: 16 upper-case hex digits (S3's `x-amz-request-id` shape), unique in the process.
    /// Seeded, it is `hex(byteCount: 8).uppercased()` of the seeded stream (reproducible); unseeded,
    /// it comes from a SplitMix64 stream seeded once from the entropy source — a full-period
    /// generator never repeats a value within 2^64 draws — and costs no call into libcrypto.
    public func requestID() -> String { nextRequestID().text }

    /// `requestID()` as its 64 bits, spelled only when read (`RequestID.text`): a gRPC call's id is
    /// read only by a look at the request log.
    public func nextRequestID() -> RequestID {
        // The seeded stream's 8 bytes, most significant first, as `hex(byteCount: 8)` spells them.
        guard !seeded else { return .bits(bytes(8).reduce(0) { $0 << 8 | UInt64($1) }) }
        if !requestStateReady.load(ordering: .acquiring) { seedRequestState() }
        var z = requestState.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return .bits(z)
    }

    /// The request ids' stream started from `entropy`, once (the first id's caller; any other
    /// caller meanwhile waits for it on `lock`).
    private func seedRequestState() {
        lock.lock()
        defer { lock.unlock() }
        guard !requestStateReady.load(ordering: .relaxed) else { return }
        requestState.store(entropy(8).reduce(0) { $0 << 8 | UInt64($1) }, ordering: .relaxed)
        requestStateReady.store(true, ordering: .releasing)
    }

    /// Lower-case hex without Foundation formatting (request ids are made on every request).
    static func hexString(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A version-4 UUID string in lower case.
    public func uuid() -> String {
        var b = bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let c = Array(Self.hexString(b))
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}
