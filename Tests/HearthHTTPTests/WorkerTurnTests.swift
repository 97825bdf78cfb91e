import Foundation
import Testing
@testable import HearthHTTP

/// `HTTPServer.renumber`: the accept loop's HTTP/1.1 sockets go to libmicrohttpd's workers in turn,
/// and libmicrohttpd picks a worker by the socket's number modulo the pool, so a socket whose number
/// names another worker is duplicated to one that names the right one (docs/benchmarks.md, txn37).
@Suite struct WorkerTurnTests {
    /// `n` open descriptors (pipes' ends), closed by the caller.
    func open(_ n: Int) -> [Int32] {
        var fds: [Int32] = []
        while fds.count < n {
            var p: [Int32] = [0, 0]
            #expect(pipe(&p) == 0)
            fds += p
        }
        return fds
    }

    func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) >= 0 }

    @Test func aNumberWithTheRightResidueIsKeptAsItIs() {
        let fds = open(2)
        defer { fds.forEach { close($0) } }
        let fd = fds[0]
        #expect(HTTPServer.renumber(fd, residue: Int(fd) % 4, modulo: 4) == fd)
        #expect(isOpen(fd))
    }

    @Test(arguments: 0..<4) func aNumberIsMovedToTheResidueAskedAndTheOriginalClosed(residue: Int) {
        // Holes below the numbers still open: every one of residue 3 among 32 descriptors closed.
        var fds = open(32)
        let holes = fds.filter { $0 % 4 == 3 }
        holes.forEach { close($0) }
        fds.removeAll { $0 % 4 == 3 }
        defer { fds.forEach { close($0) } }
        // A socket-like descriptor to move, with the kernel's number for it.
        var p: [Int32] = [0, 0]
        #expect(pipe(&p) == 0)
        defer { close(p[1]) }
        let moved = HTTPServer.renumber(p[0], residue: residue, modulo: 4)
        defer { close(moved) }
        #expect(Int(moved) % 4 == residue)
        #expect(isOpen(moved))
        #expect(fcntl(moved, F_GETFD) & FD_CLOEXEC != 0 || moved == p[0])
        if moved != p[0] { #expect(!isOpen(p[0])) }
        // The same pipe: a byte written at the other end is read from the moved number.
        var byte: UInt8 = 42
        #expect(write(p[1], &byte, 1) == 1)
        var got: UInt8 = 0
        #expect(read(moved, &got, 1) == 1)
        #expect(got == 42)
    }
}
