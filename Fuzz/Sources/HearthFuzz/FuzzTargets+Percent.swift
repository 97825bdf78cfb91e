@testable import HearthHTTP
@testable import S3Emulator

/// Differential: the byte-level query splitting and percent-decoding fast paths against the
/// general rules they stand for (written here plainly, on Characters and whole strings).
extension FuzzTargets {
    /// The input is a query string; for the header-name check, its two halves are two names.
    static func percentDecoding(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let raw = text(bytes)
        for plus in [false, true] {
            let fast = Request.percentDecode(raw, plusAsSpace: plus)
            let general = PercentReference.decode(raw, plusAsSpace: plus)
            guard fast == general else { throw FuzzFailure("percentDecode(\(raw.debugDescription), plus: \(plus)) = \(fast.debugDescription), general \(general.debugDescription)") }
            let lossy = SigV4Encoding.decode(raw, plusAsSpace: plus)
            let lossyGeneral = PercentReference.decodeLossy(raw, plusAsSpace: plus)
            guard lossy == lossyGeneral else { throw FuzzFailure("SigV4Encoding.decode(\(raw.debugDescription)) = \(lossy.debugDescription), general \(lossyGeneral.debugDescription)") }
        }
        FuzzChecks.count("percent")
        // HTTP's query items: ASCII queries take the byte path, the rest the Character one.
        let items = Request.parseQuery(raw, plusAsSpace: true)
        let general = PercentReference.query(raw)
        guard items.map(\.name) == general.map(\.name), items.map(\.value) == general.map(\.value) else {
            throw FuzzFailure("parseQuery(\(raw.debugDescription)) = \(items), general \(general)")
        }
        // S3's parameters split on bytes always (a `&` joined to a combining mark still splits).
        let s3 = QueryParameters(rawQuery: raw).items
        let pieces = raw.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
        guard s3.count == pieces.count else { throw FuzzFailure("QueryParameters(\(raw.debugDescription)): \(s3.count) items, \(pieces.count) pieces") }
        for (item, piece) in zip(s3, pieces) {
            let eq = piece.firstIndex(of: UInt8(ascii: "="))
            let name = String(decoding: piece[..<(eq ?? piece.endIndex)], as: UTF8.self)
            let value = eq.map { String(decoding: piece[piece.index(after: $0)...], as: UTF8.self) }
            guard item.rawName == name, item.rawValue == value,
                  item.name == PercentReference.decodeLossy(name, plusAsSpace: true),
                  item.value == PercentReference.decodeLossy(value ?? "", plusAsSpace: true) else {
                throw FuzzFailure("QueryParameters(\(raw.debugDescription)): \(item) for piece \(name.debugDescription)=\(String(describing: value))")
            }
        }
        // Header names: the ASCII byte comparison against comparing lower-cased forms.
        let half = raw.index(raw.startIndex, offsetBy: raw.count / 2)
        let a = String(raw[..<half]), b = String(raw[half...])
        for (x, y) in [(a, b), (a, a.uppercased()), (b, b.lowercased()), (a, a)] {
            guard HTTPHeaders.namesEqual(x, y) == (x.lowercased() == y.lowercased()) else {
                throw FuzzFailure("namesEqual(\(x.debugDescription), \(y.debugDescription)) = \(HTTPHeaders.namesEqual(x, y))")
            }
        }
    }
}

/// Percent-decoding and query splitting as the general rules state them, without fast paths.
enum PercentReference {
    static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func bytes(_ text: String, plusAsSpace: Bool) -> [UInt8] {
        let b = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) {
                out.append(h * 16 + l)
                i += 3
            } else {
                out.append(plusAsSpace && b[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : b[i])
                i += 1
            }
        }
        return out
    }

    /// Decoded, or the text as sent when the result is not UTF-8.
    static func decode(_ text: String, plusAsSpace: Bool) -> String {
        String(validating: bytes(text, plusAsSpace: plusAsSpace), as: UTF8.self) ?? text
    }

    /// Decoded, invalid UTF-8 replaced.
    static func decodeLossy(_ text: String, plusAsSpace: Bool) -> String {
        String(decoding: bytes(text, plusAsSpace: plusAsSpace), as: UTF8.self)
    }

    /// `a=1&b` as pairs, split on Characters.
    static func query(_ raw: String) -> [(name: String, value: String?)] {
        raw.split(separator: "&", omittingEmptySubsequences: true).map { part in
            guard let eq = part.firstIndex(of: "=") else { return (decode(String(part), plusAsSpace: true), nil) }
            return (decode(String(part[..<eq]), plusAsSpace: true), decode(String(part[part.index(after: eq)...]), plusAsSpace: true))
        }
    }
}
