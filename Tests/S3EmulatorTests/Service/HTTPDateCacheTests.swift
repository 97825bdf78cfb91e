import HearthCore
import Testing
@testable import S3Emulator

@Suite struct HTTPDateCacheTests {
    /// The cached text is always the current second's, whichever way the (frozen, advanced or
    /// moved back) emulator clock went.
    @Test func answersTheHTTPDateOfEachSecond() {
        let cache = HTTPDateCache()
        let micros: [Int64] = [0, 999_999, 1_000_000, 1_700_000_000_123_456, 1_700_000_000_999_999, 1_700_000_001_000_000,
                               1_600_000_000_000_000, 1_600_000_000_000_000, -1, -1_000_001]
        for m in micros {
            let t = Instant(unixMicros: m)
            #expect(cache.value(for: t) == t.httpDate)
        }
    }
}
