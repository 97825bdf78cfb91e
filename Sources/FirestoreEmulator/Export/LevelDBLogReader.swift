import HearthCrypto

/// Reads the records of a LevelDB log file — the container of Cloud Firestore (and Datastore)
/// managed exports and of the Firestore emulator's own exports (`output-N` files and the
/// `.overall_export_metadata` file).
///
/// The file is a run of 32 KiB blocks; a block holds records of a 7-byte header (masked CRC-32C
/// of type and payload, little-endian 32 bits; payload length, little-endian 16 bits; type) and
/// the payload. A logical record too large for the rest of a block is split FIRST, MIDDLE…, LAST;
/// fewer than 7 bytes left in a block are zero padding. Every checksum is verified: an export is
/// either read exactly or refused.
///
/// Related: https://github.com/google/leveldb/blob/main/doc/log_format.md
struct LevelDBLogReader {
    /// Why a log cannot be read.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let blockSize = 32 * 1024
    static let headerSize = 7

    enum RecordType: UInt8 {
        case zero = 0, full = 1, first = 2, middle = 3, last = 4
    }

    /// Every logical record of `bytes`, in order.
    static func records(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        var pending: [UInt8]? = nil
        var offset = 0
        while offset < bytes.count {
            let leftInBlock = blockSize - offset % blockSize
            if leftInBlock < headerSize {
                offset += leftInBlock
                continue
            }
            guard bytes.count - offset >= headerSize else {
                throw Failure(description: "truncated record header at byte \(offset)")
            }
            let stored = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
            let rawType = bytes[offset + 6]
            let payloadStart = offset + headerSize
            if rawType == RecordType.zero.rawValue && length == 0 && stored == 0 {
                // Preallocated, never-written space: the rest of the block is padding.
                offset += leftInBlock
                continue
            }
            guard length <= leftInBlock - headerSize, payloadStart + length <= bytes.count else {
                throw Failure(description: "record at byte \(offset) runs past its block or the file")
            }
            guard let type = RecordType(rawValue: rawType), type != .zero else {
                throw Failure(description: "unknown record type \(rawType) at byte \(offset)")
            }
            var crc = CRC32(.castagnoli)
            crc.update([rawType])
            crc.update(bytes[payloadStart..<(payloadStart + length)])
            guard mask(crc.value) == stored else {
                throw Failure(description: "checksum mismatch in the record at byte \(offset)")
            }
            let payload = bytes[payloadStart..<(payloadStart + length)]
            switch type {
            case .full:
                guard pending == nil else { throw Failure(description: "FULL record inside a fragmented one at byte \(offset)") }
                out.append(Array(payload))
            case .first:
                guard pending == nil else { throw Failure(description: "FIRST record inside a fragmented one at byte \(offset)") }
                pending = Array(payload)
            case .middle:
                guard pending != nil else { throw Failure(description: "MIDDLE record without FIRST at byte \(offset)") }
                pending?.append(contentsOf: payload)
            case .last:
                guard var whole = pending else { throw Failure(description: "LAST record without FIRST at byte \(offset)") }
                whole.append(contentsOf: payload)
                out.append(whole)
                pending = nil
            case .zero:
                break
            }
            offset = payloadStart + length
        }
        guard pending == nil else { throw Failure(description: "the log ends inside a fragmented record") }
        return out
    }

    /// LevelDB's CRC masking (a checksum of data holding checksums is otherwise weak).
    static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
