import HearthCrypto

/// Writes records as a LevelDB log, as LevelDB (and so the Cloud Firestore emulator's export)
/// writes one: records split at 32 KiB block ends into FIRST, MIDDLE…, LAST pieces, fewer than 7
/// bytes left in a block zero-padded, each piece's header with its masked CRC-32C.
///
/// Hearth exports its own format and never writes a log; this is `LevelDBLogReader`'s other half
/// for its tests and for the `import` fuzz target, which frames fuzzed records so that what varies
/// is the records, not checksums the reader would refuse.
enum LevelDBLogWriter {
    static func log(_ records: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        func header(_ type: LevelDBLogReader.RecordType, _ payload: ArraySlice<UInt8>) {
            var crc = CRC32(.castagnoli)
            crc.update([type.rawValue])
            crc.update(payload)
            let masked = LevelDBLogReader.mask(crc.value)
            out += [UInt8(masked & 0xFF), UInt8(masked >> 8 & 0xFF), UInt8(masked >> 16 & 0xFF), UInt8(masked >> 24),
                    UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), type.rawValue]
            out += payload
        }
        for record in records {
            var rest = record[...]
            var first = true
            repeat {
                var left = LevelDBLogReader.blockSize - out.count % LevelDBLogReader.blockSize
                if left < LevelDBLogReader.headerSize {
                    out += [UInt8](repeating: 0, count: left)
                    left = LevelDBLogReader.blockSize
                }
                let n = min(rest.count, left - LevelDBLogReader.headerSize)
                let end = n == rest.count
                header(first && end ? .full : first ? .first : end ? .last : .middle, rest.prefix(n))
                rest = rest.dropFirst(n)
                first = false
            } while !rest.isEmpty
        }
        return out
    }
}
