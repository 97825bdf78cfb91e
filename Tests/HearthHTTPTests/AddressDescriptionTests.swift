import Foundation
import Testing
@testable import HearthHTTP

@Suite struct AddressDescriptionTests {
    static func describe(_ ip: String, port: UInt16, withPort: Bool) -> String {
        var s = sockaddr_in()
        s.sin_family = sa_family_t(AF_INET)
        s.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, ip, &s.sin_addr)
        return withUnsafePointer(to: &s) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { HTTPServer.describe($0, withPort: withPort) }
        }
    }

    /// The loopback literal (every client of a 127.0.0.1 listener) reads as inet_ntop writes it,
    /// and so do the addresses that take the general path.
    @Test(arguments: ["127.0.0.1", "127.0.0.2", "10.1.2.3", "0.0.0.0", "1.0.0.127", "255.255.255.255"])
    func ipv4(ip: String) {
        #expect(Self.describe(ip, port: 40_123, withPort: false) == ip)
        #expect(Self.describe(ip, port: 40_123, withPort: true) == "\(ip):40123")
    }
}
