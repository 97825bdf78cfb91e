import HearthCore
import Testing
@testable import FirestoreEmulator

/// The REST commit's answer written straight out is byte for byte the serialized JSON tree.
struct CommitResponseTests {
    static let cases: [[FirestoreService.WriteOutcome]] = [
        [],
        [.init(updateTime: Instant(unixMicros: 1_700_000_000_000_001), transformResults: [], document: nil)],
        [.init(updateTime: nil, transformResults: [], document: nil)],
        [.init(updateTime: nil, transformResults: [.integer(7)], document: nil)],
        [
            .init(updateTime: Instant(unixMicros: 3), transformResults: [.timestamp(Instant(unixMicros: 3)), .integer(7), .null,
                                                                            .double(0.5), .string("a\"b\u{1}")], document: nil),
            .init(updateTime: Instant(unixMicros: 1_000), transformResults: [], document: nil),
            .init(updateTime: nil, transformResults: [], document: nil),
            .init(updateTime: Instant(unixMicros: -1_500_000), transformResults: [.array([.map(["k": .boolean(true)])])], document: nil),
        ],
    ]

    static let commitTime = Instant(unixMicros: 1_700_000_000_123_000)

    /// Times equal to the commit time (a create with a server timestamp: its update time and the
    /// timestamp are the commit time), whose text the answer copies instead of formatting again —
    /// also after another instant came between.
    static let sameTimes: [[FirestoreService.WriteOutcome]] = {
        let t = commitTime, other = Instant(unixMicros: 1_700_000_000_123_001)
        return [
            [.init(updateTime: t, transformResults: [.timestamp(t)], document: nil)],
            [.init(updateTime: t, transformResults: [.timestamp(t), .timestamp(t)], document: nil),
             .init(updateTime: t, transformResults: [], document: nil)],
            [.init(updateTime: other, transformResults: [.timestamp(t), .timestamp(other), .timestamp(t)], document: nil),
             .init(updateTime: nil, transformResults: [.timestamp(other)], document: nil)],
            [.init(updateTime: Instant(unixMicros: -1), transformResults: [.timestamp(Instant(unixMicros: -1))], document: nil)],
        ]
    }()

    @Test(arguments: cases + sameTimes)
    func writtenAsTheTreeSerializes(results: [FirestoreService.WriteOutcome]) {
        let commitTime = Self.commitTime
        // What the handler answered before: the response built as a JSON tree, then written.
        // A commit of no writes is `{}`: no commit time, as Firestore and the emulator answer (faith34).
        var o: [(String, JSON)] = []
        if !results.isEmpty {
            o.append(("writeResults", .array(results.map(FirestoreHTTPService.writeResultJSON))))
            o.append(("commitTime", .string(ValueJSON.formatTimestamp(commitTime))))
        }
        var tree = JSONWriter()
        tree.json(.object(JSONObject(o)))
        let direct = FirestoreHTTPService.commitResponse(commitTime: commitTime, results: results)
        #expect(String(decoding: direct.bytes, as: UTF8.self) == String(decoding: tree.bytes, as: UTF8.self))
    }
}
