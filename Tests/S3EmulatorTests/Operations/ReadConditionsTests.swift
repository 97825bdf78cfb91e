import HearthCore
import Testing
@testable import S3Emulator

@Suite struct ReadConditionsTests {
    @Test(arguments: [
        ("bytes=0-4", ReadConditions.RangeOutcome.partial(start: 0, end: 4)),
        ("bytes=5-", .partial(start: 5, end: 9)),
        ("bytes=-3", .partial(start: 7, end: 9)),
        ("bytes=-30", .partial(start: 0, end: 9)),
        ("bytes=8-100", .partial(start: 8, end: 9)),
        ("bytes=9-9", .partial(start: 9, end: 9)),
        ("bytes=10-", .unsatisfiable),
        ("bytes=10-20", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=5-2", .whole),
        ("bytes=0-1,3-4", .whole),
        ("items=0-1", .whole),
        ("bytes=a-b", .whole),
        ("garbage", .whole),
        ("bytes=99999999999999999999999-", .unsatisfiable),
    ])
    func ranges(header: String, expected: ReadConditions.RangeOutcome) {
        #expect(ReadConditions.range(header, size: 10) == expected)
    }

    @Test func rangeOnEmptyObjectIsUnsatisfiable() {
        #expect(ReadConditions.range("bytes=0-", size: 0) == .unsatisfiable)
        #expect(ReadConditions.range("bytes=-5", size: 0) == .unsatisfiable)
        #expect(ReadConditions.range(nil, size: 0) == .whole)
    }

    static let modified = Instant(rfc3339: "2026-11-30T06:33:14Z")!
    static let before = "Mon, 30 Nov 2026 06:00:00 GMT"
    static let after = "Mon, 30 Nov 2026 07:00:00 GMT"
    static let exact = "Mon, 30 Nov 2026 06:33:14 GMT"

    @Test(arguments: [
        // (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, outcome)
        (nil, nil, nil, nil, ReadConditions.Outcome.proceed),
        ("\"abc\"", nil, nil, nil, .proceed),
        ("abc", nil, nil, nil, .proceed),
        ("*", nil, nil, nil, .proceed),
        ("\"x\", \"abc\"", nil, nil, nil, .proceed),
        ("\"nope\"", nil, nil, nil, .preconditionFailed("If-Match")),
        (nil, before, nil, nil, .preconditionFailed("If-Unmodified-Since")),
        (nil, exact, nil, nil, .proceed),
        (nil, after, nil, nil, .proceed),
        ("\"abc\"", before, nil, nil, .proceed),  // If-Match true wins over If-Unmodified-Since false
        (nil, nil, "\"abc\"", nil, .notModified),
        (nil, nil, "W/\"abc\"", nil, .notModified),
        (nil, nil, "*", nil, .notModified),
        (nil, nil, "\"other\"", nil, .proceed),
        (nil, nil, nil, after, .notModified),
        (nil, nil, nil, exact, .notModified),
        (nil, nil, nil, before, .proceed),
        (nil, nil, "\"abc\"", before, .notModified),  // If-None-Match false, If-Modified-Since true → 304
        (nil, nil, "\"other\"", after, .proceed),  // If-None-Match wins
        (nil, nil, nil, "not a date", .proceed),
        ("\"nope\"", nil, "\"abc\"", nil, .preconditionFailed("If-Match")),
    ] as [(String?, String?, String?, String?, ReadConditions.Outcome)])
    func conditions(im: String?, ius: String?, inm: String?, ims: String?, expected: ReadConditions.Outcome) {
        #expect(ReadConditions.evaluate(ifMatch: im, ifUnmodifiedSince: ius, ifNoneMatch: inm, ifModifiedSince: ims,
                                        etag: "\"abc\"", lastModified: Self.modified) == expected)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37Z"),
        ("Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06T08:49:37Z"),
        ("Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z"),
        ("Mon, 30 Nov 2026 06:33:14 GMT", "2026-11-30T06:33:14Z"),
    ])
    func httpDates(text: String, rfc3339: String) {
        #expect(HTTPDate.parse(text) == Instant(rfc3339: rfc3339))
    }

    @Test(arguments: ["", "yesterday", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT"])
    func badHTTPDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
