import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PUT that stops half-way and hangs up, which URLSession cannot do.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Connects to `url`'s host, sends `method` with the headers and `Content-Length: declaredLength`,
    /// writes only `body`, then closes the connection.
    static func sendTruncated(_ method: String, url: URL, headers: [String: String], declaredLength: Int, body: Data) throws {
        guard let host = url.host, let port = url.port else { throw Failure(description: "URL without host and port: \(url)") }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            throw Failure(description: "not an IPv4 address: \(host)")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect() failed: \(errno)") }
        // The request target exactly as presigned: path and query untouched.
        let target = url.absoluteString.dropFirst("http://\(host):\(port)".count)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Length: \(declaredLength)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        try write(fd, Data(head.utf8))
        try write(fd, body)
        // Give the server a moment to read what was sent before the connection drops.
        usleep(100_000)
    }

    private static func write(_ fd: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw Failure(description: "send() failed: \(errno)") }
                offset += n
            }
        }
    }
}
