import Testing
import HearthHTTP

@Suite struct ServerAllocatorTests {
    /// A 64 MiB block touched and held is in both figures, and leaves them once freed (blocks that
    /// large are always mmapped by glibc, so it goes back to the system). Other tests running
    /// alongside move the figures by far less than the margin.
    @Test func aLargeBlockCountsWhileHeldAndNotAfter() {
        guard ServerAllocator.totals().held > 0 else { return }  // not glibc 2.33+: no figures to check
        let before = ServerAllocator.totals()
        let bytes = 64 << 20
        let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 1, count: bytes)
        let during = ServerAllocator.totals()
        block.deallocate()
        let after = ServerAllocator.totals()
        #expect(during.inUse - before.inUse >= 48 << 20)
        #expect(during.held >= during.inUse)
        #expect(during.inUse - after.inUse >= 48 << 20)
        #expect(during.held - after.held >= 48 << 20)
    }
}
