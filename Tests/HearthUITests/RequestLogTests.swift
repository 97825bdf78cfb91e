import HearthCore
import HearthHTTP
import Testing
@testable import HearthUI

@Suite struct RequestLogTests {
    static func entry(_ service: String, _ status: Int, path: String = "/p", user: String? = nil) -> RequestLog.Entry {
        RequestLog.Entry(seq: 0, time: Instant(unixMicros: 0), service: service, method: "GET", path: path, status: status,
                         durationMicros: 5, requestID: "r", user: user, fields: [], errorBody: nil, errorContentType: nil)
    }

    @Test func keepsTheNewestUpToCapacityNewestFirst() {
        let log = RequestLog(capacity: 3)
        for i in 1...5 { log.append(Self.entry("s3", 200, path: "/\(i)")) }
        let (entries, latest, kept) = log.list(RequestLog.Filter())
        #expect(entries.map(\.path) == ["/5", "/4", "/3"])
        #expect(entries.map(\.seq) == [5, 4, 3])
        #expect(latest == 5 && kept == 3)
        #expect(log.entry(2) == nil)
        #expect(log.entry(4)?.path == "/4")
    }

    @Test func aFullLogHoldsNoMoreSlotsThanItsCapacity() {
        // The default 20,000 on the way up: plain doubling would stop at 32,768 slots.
        let log = RequestLog(capacity: 20_000)
        for _ in 0..<20_000 { log.append(Self.entry("s3", 200)) }
        #expect(log.reservedSlots >= 20_000 && log.reservedSlots < 20_500)
        for _ in 0..<100 { log.append(Self.entry("s3", 200)) }
        #expect(log.reservedSlots < 20_500)
        #expect(log.list(RequestLog.Filter()).count == 20_000)
    }

    @Test func errorBodiesStayWithinTheirBudgetOldestDroppedFirst() {
        let log = RequestLog(capacity: 100, bodyBudget: 250)
        for i in 1...5 {
            var e = Self.entry("firestore", 403, path: "/\(i)")
            e.errorBody = String(repeating: "x", count: 100)
            log.append(e)
        }
        #expect((1...5).map { log.entry($0)?.errorBody != nil } == [false, false, false, true, true])
        #expect(log.entry(1)?.path == "/1")
    }

    @Test func filtersByServiceStatusUserPathAndCursor() {
        let log = RequestLog(capacity: 100)
        log.append(Self.entry("firestore", 200, path: "/v1/a", user: "alice"))
        log.append(Self.entry("firestore", 403, path: "/v1/b", user: "bob"))
        log.append(Self.entry("s3", 403, path: "/bucket/k", user: "test"))
        log.append(Self.entry("auth", 500, path: "/x"))
        func paths(_ build: (inout RequestLog.Filter) -> Void) -> [String] {
            var f = RequestLog.Filter()
            build(&f)
            return log.list(f).entries.map(\.path)
        }
        #expect(paths { $0.service = "firestore" } == ["/v1/b", "/v1/a"])
        #expect(paths { $0.status = "403" } == ["/bucket/k", "/v1/b"])
        #expect(paths { $0.status = "4xx" } == ["/bucket/k", "/v1/b"])
        #expect(paths { $0.status = "error" } == ["/x", "/bucket/k", "/v1/b"])
        #expect(paths { $0.status = "ok" } == ["/v1/a"])
        #expect(paths { $0.user = "BO" } == ["/v1/b"])
        #expect(paths { $0.path = "bucket" } == ["/bucket/k"])
        #expect(paths { $0.after = 2 } == ["/x", "/bucket/k"])
        #expect(paths { $0.before = 3 } == ["/v1/b", "/v1/a"])
        #expect(paths { $0.limit = 1 } == ["/x"])
    }

    @Test func recordingServiceLogsCallerStatusAndErrorBodyButNotTheQuery() {
        let log = RequestLog()
        let router = Router()
        router.get("/v1/doc") { _, _ in .json(.object(["error": .object(["message": .string("false for 'get' @ L5")])]), status: 403) }
        let service = RecordingService("firestore", router, log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        // A JWT whose payload is {"user_id":"alice"} (unsigned, as the emulator's tokens).
        let token = "eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYWxpY2UifQ."
        let req = Request(method: "GET", target: "/v1/doc?secret=1", headers: ["Authorization": "Bearer \(token)"])
        if case .collect(_, _, let handler) = service.dispose(req) { _ = handler(req) } else { Issue.record("expected collect") }
        let e = try! #require(log.list(RequestLog.Filter()).entries.first)
        #expect(e.service == "firestore" && e.status == 403 && e.path == "/v1/doc" && e.user == "alice")
        #expect(e.errorBody?.contains("@ L5") == true)
    }

    @Test(arguments: [
        ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", "AKIDEXAMPLE"),
        ("Bearer owner", "owner"),
        ("Bearer not-a-jwt", nil),
        ("AWS test:c2lnbmF0dXJl", "test"),
    ] as [(String, String?)])
    func callerNames(authorization: String, expected: String?) {
        let req = Request(method: "GET", target: "/", headers: ["Authorization": authorization])
        #expect(CallerName.of(req) == expected)
    }

    /// The last `Authorization` value is remembered whole: values that follow each other must each
    /// get their own name, never the one before's (tokens of alice and bob, the same token with
    /// spaces around it, a token naming nobody).
    @Test func successiveBearerValuesEachNameTheirOwnCaller() {
        let alice = "eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYWxpY2UifQ."  // {"user_id":"alice"}
        let bob = "eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYm9iIn0."  // {"user_id":"bob"}
        let sequence: [(String, String?)] = [
            ("Bearer \(alice)", "alice"), ("Bearer \(alice)", "alice"), ("Bearer \(bob)", "bob"),
            ("Bearer \(alice) ", "alice"), ("Bearer not-a-jwt", nil), ("Bearer \(bob)", "bob"),
            ("Bearer not-a-jwt", nil), ("Bearer \(alice)", "alice"),
        ]
        for (authorization, expected) in sequence + sequence {
            #expect(CallerName.ofAuthorization(authorization) == expected, "\(authorization)")
        }
    }

    /// A thread's last value answers again only for the very same string (or a small string of the
    /// same bytes): values of one length that differ in a byte, and the same bytes in another
    /// string, are each named for their own bytes, on this thread and on another.
    @Test func theLastValueNamedAnswersOnlyForItsOwnBytes() async {
        let head = "Bearer eyJhbGciOiJub25lIn0."
        let alice = head + "eyJ1c2VyX2lkIjoiYWxpY2UifQ."  // {"user_id":"alice"}, made at run time
        let alicf = head + "eyJ1c2VyX2lkIjoiYWxpY2YifQ."  // {"user_id":"alicf"}: the same length
        let again = String(decoding: Array(alice.utf8), as: UTF8.self)  // alice's bytes, other storage
        let sequence: [(String, String?)] = [
            (alice, "alice"), (alice, "alice"), (alicf, "alicf"), (alice, "alice"), (again, "alice"), (again, "alice"),
            ("Bearer owner", "owner"), ("Bearer owner", "owner"), ("Bearer ownes", nil), (alicf, "alicf"), (alice, "alice"),
        ]
        for (authorization, expected) in sequence {
            #expect(CallerName.ofAuthorization(authorization) == expected, "\(authorization)")
        }
        let elsewhere = await Task.detached { sequence.reversed().map { CallerName.ofAuthorization($0.0) } }.value
        #expect(elsewhere == sequence.reversed().map(\.1))
    }

    /// A token is named by its bytes: with U+212A KELVIN SIGN for its `K` (canonically the same
    /// `String`), the token the log just named is not that caller, as an undecodable token names nobody.
    @Test func aCanonicallyEquivalentTokenIsNotNamedAsTheOriginal() {
        let token = "eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiam9KIn0."  // {"user_id":"joJ"}
        let imitation = token.replacingOccurrences(of: "K", with: "\u{212A}")
        #expect(!imitation.utf8.elementsEqual(token.utf8))
        for _ in 0..<2 {
            #expect(CallerName.ofAuthorization("Bearer \(token)") == "joJ")
            #expect(CallerName.ofAuthorization("Bearer \(imitation)") == nil)
            // The same after two spaces (a header not noted before: looked up by its token too).
            #expect(CallerName.ofAuthorization("Bearer  \(token)") == "joJ")
            #expect(CallerName.ofAuthorization("Bearer  \(imitation)") == nil)
        }
    }

    /// The byte prefix test agrees with `hasPrefix` (Characters), combining marks and all.
    @Test(arguments: ["Bearer x", "Bearer ", "Bearer", "bearer x", "Bearer \u{301}x", "Bearer \u{301}", "Bearer\u{301} x",
                      "Bearer x\u{301}", "Bearer  x", "", "B", "Bearer \r\nx", "BEARER x", "Bearer\tx"])
    func bearerPrefixAgreesWithCharacters(text: String) {
        #expect(CallerName.startsWith(text, "Bearer ") == text.hasPrefix("Bearer "))
    }

    @Test func presignedQueryNamesTheAccessKey() {
        let req = Request(method: "GET", target: "/b/k?X-Amz-Credential=test%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=x")
        #expect(CallerName.of(req) == "test")
    }
}
