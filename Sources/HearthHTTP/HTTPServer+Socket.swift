import Foundation
internal import CLinuxIO

/// The listening socket of a plain listener: what libmicrohttpd did for us before we accepted
/// connections ourselves, with the same options.
extension HTTPServer {
    static func socketAddress(_ host: String, port: Int) throws(HTTPServerError) -> (sockaddr_storage, Int, Bool) {
        var storage = sockaddr_storage()
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { s in
                    s.pointee.sin_family = sa_family_t(AF_INET)
                    s.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                    s.pointee.sin_addr = v4
                }
            }
            return (storage, MemoryLayout<sockaddr_in>.size, false)
        }
        var v6 = in6_addr()
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { s in
                    s.pointee.sin6_family = sa_family_t(AF_INET6)
                    s.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                    s.pointee.sin6_addr = v6
                }
            }
            return (storage, MemoryLayout<sockaddr_in6>.size, true)
        }
        throw .badAddress(host)
    }

    /// A nonblocking socket bound to `storage` and listening.
    static func listen(on storage: sockaddr_storage, length: Int, host: String, port: Int) throws(HTTPServerError) -> Int32 {
        let family = Int32(storage.ss_family)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .startFailed(host: host, port: port, reason: String(cString: strerror(errno))) }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        // As libmicrohttpd does on its own sockets: a restart may rebind while old connections linger
        // in TIME_WAIT, and an IPv6 listener serves IPv6 only.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size)
        if family == AF_INET6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, size) }
        var address = storage
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0, Glibc.listen(fd, SOMAXCONN) == 0 else {
            let e = errno
            close(fd)
            if e == EADDRINUSE { throw .addressInUse(host: host, port: port) }
            throw .startFailed(host: host, port: port, reason: String(cString: strerror(e)))
        }
        return fd
    }

    /// The port the kernel gave a socket (port 0 asks for any).
    static func boundPort(of fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let isIPv6 = Int32(storage.ss_family) == AF_INET6
        return withUnsafePointer(to: &storage) { p in
            if isIPv6 {
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// A peer address as text: `ip`, or `ip:port` (`[ip]:port` for IPv6).
    static func describe(_ addr: UnsafePointer<sockaddr>, withPort: Bool) -> String {
        if !withPort, Int32(addr.pointee.sa_family) == AF_INET,
           addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1, { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }) == 0x7F00_0001 {
            // Every request's client address, and Hearth listens on loopback: a literal, not a
            // buffer, inet_ntop and a new string per request (~2,900 instructions).
            return "127.0.0.1"
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if Int32(addr.pointee.sa_family) == AF_INET {
            return addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { s in
                var a = s.pointee.sin_addr
                inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count))
                let ip = String(cString: buffer)
                return withPort ? "\(ip):\(UInt16(bigEndian: s.pointee.sin_port))" : ip
            }
        } else if Int32(addr.pointee.sa_family) == AF_INET6 {
            return addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { s in
                var a = s.pointee.sin6_addr
                inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count))
                let ip = String(cString: buffer)
                return withPort ? "[\(ip)]:\(UInt16(bigEndian: s.pointee.sin6_port))" : ip
            }
        }
        return ""
    }
}
