import Foundation

/// An IPv4 or IPv6 address or CIDR block (`10.0.0.0/8`, `2001:db8::/32`; no prefix: one address).
struct IPNetwork: Sendable, Equatable {
    var bytes: [UInt8]
    var prefix: Int

    init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPNetwork.address(String(parts[0])) else { return nil }
        bytes = address
        if parts.count == 2 {
            guard let p = Int(parts[1]), (0...(address.count * 8)).contains(p) else { return nil }
            prefix = p
        } else {
            prefix = address.count * 8
        }
    }

    /// Whether `address` is inside the block (an IPv4-mapped IPv6 address counts as its IPv4 one).
    func contains(_ address: [UInt8]) -> Bool {
        var a = address
        if a.count == 16, bytes.count == 4, a[0..<10].allSatisfy({ $0 == 0 }), a[10] == 0xFF, a[11] == 0xFF { a = Array(a[12...]) }
        guard a.count == bytes.count else { return false }
        var bit = 0
        while bit < prefix {
            let i = bit / 8
            let take = min(8, prefix - bit)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if a[i] & mask != bytes[i] & mask { return false }
            bit += take
        }
        return true
    }

    static func address(_ text: String) -> [UInt8]? {
        if text.contains(":") { return ipv6(text) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), let v = UInt8(p) else { return nil }
            out.append(v)
        }
        return out
    }

    private static func ipv6(_ text: String) -> [UInt8]? {
        var address = text
        if let percent = address.firstIndex(of: "%") { address = String(address[..<percent]) }
        var tail: [UInt8] = []
        if address.contains("."), let colon = address.lastIndex(of: ":") {
            guard let v4 = IPNetwork.address(String(address[address.index(after: colon)...])) else { return nil }
            tail = v4
            address = String(address[...colon]) + "0:0"
        }
        let halves = address.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ s: String) -> [UInt16]? {
            if s.isEmpty { return [] }
            var out: [UInt16] = []
            for g in s.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(g.count), let v = UInt16(g, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let rest = groups(halves[1]), head.count + rest.count <= 7 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - rest.count) + rest
        }
        guard all.count == 8 else { return nil }
        var out = all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        if !tail.isEmpty { out.replaceSubrange(12..<16, with: tail) }
        return out
    }
}
