import Foundation

/// A blocking TCP client for driving the server byte by byte (tests need malformed and partial requests).
final class RawClient {
    let fd: Int32

    init(port: Int, host: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    /// Reads one HTTP response (status line, headers, body by Content-Length or chunked).
    ///
    /// Bytes received past the response (a pipelined request's answer that arrived in the same
    /// `recv`) are kept for the next call: dropping them made the next read wait for an answer
    /// already received (WorkerPollTests failed so, ~1 run in 40).
    func readResponse() -> (status: Int, headers: [String: String], body: [UInt8])? {
        var buffer = pending
        pending = []
        defer { pending = buffer }
        func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        var headerEnd: Int?
        while headerEnd == nil {
            if let r = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { headerEnd = r.upperBound; break }
            if !fill() { return nil }
        }
        let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var headers: [String: String] = [:]
        for l in lines where !l.isEmpty {
            if let c = l.firstIndex(of: ":") {
                headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
            }
        }
        buffer.removeFirst(headerEnd!)
        if status == 100 { return readResponseAfterContinue(buffer) }
        if let cl = headers["content-length"], let n = Int(cl) {
            while buffer.count < n { if !fill() { break } }
            let body = Array(buffer.prefix(n))
            buffer.removeFirst(body.count)
            return (status, headers, body)
        }
        if headers["transfer-encoding"]?.contains("chunked") == true {
            var body: [UInt8] = []
            while true {
                while buffer.firstRange(of: Array("\r\n".utf8)) == nil { if !fill() { return (status, headers, body) } }
                let r = buffer.firstRange(of: Array("\r\n".utf8))!
                let size = Int(String(decoding: buffer[0..<r.lowerBound], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
                buffer.removeFirst(r.upperBound)
                while buffer.count < size + 2 { if !fill() { return (status, headers, body) } }
                body.append(contentsOf: buffer[0..<size])
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
            return (status, headers, body)
        }
        return (status, headers, [])
    }

    private var pending: [UInt8] = []
    private func readResponseAfterContinue(_ rest: [UInt8]) -> (status: Int, headers: [String: String], body: [UInt8])? {
        // Callers that expect 100-continue use readInterim instead.
        return (100, [:], rest)
    }

    /// Whether the peer closed the connection (recv returns 0) within the receive timeout.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}
