import HearthCore
import HearthCrypto

/// Object version ids: 32 URL-safe characters, as S3's look (`KC0WuaPTHv7At3olS.BPuH.weAJqMkKJ`).
///
/// S3's ids are opaque and self-checking: an id it never issued ("Eyn7lxdGE1WU1SU6QTbW1X6cbSIIRY0R"
/// for a `version-id-marker`, `abc` for a `versionId`) is `400 InvalidArgument` "Invalid version id
/// specified", while one it issued whose version is gone is `404 NoSuchVersion` (GET) or a no-op
/// (DELETE). Hearth's ids carry a check as well: 24 random characters and 8 characters of a
/// SHA-256 over them, so the same distinction holds.
enum VersionID {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._".utf8)

    /// A new id (randomness from `ids`, so `--seed` runs are reproducible).
    static func make(_ ids: IDGenerator) -> String {
        let random = encode(ids.bytes(18))
        return random + check(random)
    }

    /// Whether `text` is an id Hearth could have issued (`null` is not one: callers test it first).
    static func isWellFormed(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 32, bytes.allSatisfy({ alphabet.contains($0) }) else { return false }
        let random = String(decoding: bytes[0..<24], as: UTF8.self)
        return String(decoding: bytes[24...], as: UTF8.self) == check(random)
    }

    private static func check(_ random: String) -> String {
        encode(Array(Digest.sha256(Array(("hearth-version:" + random).utf8))[0..<6]))
    }

    /// Six bits a character, three bytes at a time.
    private static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 2 < bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((v >> UInt32(shift)) & 0x3F)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
