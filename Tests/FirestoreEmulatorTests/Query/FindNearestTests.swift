import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The three distance measures, ranking, thresholds and limits of `findNearest`, against the
/// numbers and orders the official emulator answered for the same vectors (docs/firestore.md).
@Suite struct FindNearestTests {
    static func nearest(_ measure: FindNearest.Measure, _ vector: [Double], limit: Int = 10, threshold: Double? = nil,
                        resultField: String? = "d") -> FindNearest {
        FindNearest(field: FieldPath(["e"]), vector: vector, measure: measure, limit: limit, resultField: resultField, threshold: threshold)
    }

    static func doc(_ id: String, _ e: FirestoreValue?, _ extra: [ExactString: FirestoreValue] = [:]) -> StoredDocument {
        var fields = extra
        if let e { fields["e"] = e }
        return StoredDocument(path: ResourcePath(["n", id]), fields: fields, createTime: Instant(unixMicros: 1), updateTime: Instant(unixMicros: 1))
    }

    /// The emulator's probe collection, in name order as the query returns it.
    static let docs = [
        doc("a", .vector([1, 0])), doc("arr", .array([.double(1), .double(0)])), doc("b", .vector([0, 1])),
        doc("c", .vector([1, 1])), doc("d", .vector([3, 4])), doc("dist", .vector([2, 0]), ["distance": .string("existing")]),
        doc("e", .vector([-1, 0])), doc("f", .vector([1, 0])), doc("g3", .vector([1, 0, 0])), doc("none", nil),
        doc("zero", .vector([0, 0])),
    ]

    static func ranked(_ n: FindNearest) -> [(String, Double?)] {
        n.nearest(docs).map { ($0.path.lastSegment, $0.fields["d"].flatMap { if case .double(let x) = $0 { x } else { nil } }) }
    }

    static func same(_ got: [(String, Double?)], _ want: [(String, Double)]) -> Bool {
        got.count == want.count && zip(got, want).allSatisfy { g, w in
            g.0 == w.0 && (g.1.map { $0.isNaN && w.1.isNaN || $0 == w.1 } ?? false)
        }
    }

    @Test func euclideanNearestFirstTiesInQueryOrder() {
        let got = Self.ranked(Self.nearest(.euclidean, [1, 0]))
        #expect(Self.same(got, [("a", 0), ("f", 0), ("c", 1), ("dist", 1), ("zero", 1), ("b", 2.0.squareRoot()), ("e", 2), ("d", 20.0.squareRoot())]))
    }

    @Test func cosineIsOneMinusTheCosineAndAZeroVectorIsNaNAndLast() {
        let got = Self.ranked(Self.nearest(.cosine, [1, 0]))
        #expect(Self.same(got, [("a", 0), ("dist", 0), ("f", 0), ("c", 0.29289321881345254), ("d", 0.4), ("b", 1), ("e", 2), ("zero", .nan)]))
    }

    @Test func dotProductLargestFirst() {
        let got = Self.ranked(Self.nearest(.dotProduct, [1, 0]))
        #expect(Self.same(got, [("d", 3), ("dist", 2), ("a", 1), ("c", 1), ("f", 1), ("b", 0), ("zero", 0), ("e", -1)]))
    }

    @Test func thresholdsBoundTheDistanceOrTheSimilarity() {
        #expect(Self.ranked(Self.nearest(.euclidean, [1, 0], threshold: 1)).map(\.0) == ["a", "f", "c", "dist", "zero"])
        #expect(Self.ranked(Self.nearest(.cosine, [1, 0], threshold: 0)).map(\.0) == ["a", "dist", "f"])
        #expect(Self.ranked(Self.nearest(.dotProduct, [1, 0], threshold: 1)).map(\.0) == ["d", "dist", "a", "c", "f"])
        // NaN is never within a threshold.
        #expect(Self.ranked(Self.nearest(.cosine, [1, 0], threshold: 5)).map(\.0).contains("zero") == false)
    }

    /// NaN ranks as the largest distance: last for the distances, first for the dot product.
    @Test func nanRanksAsTheLargestDistance() {
        let docs = [Self.doc("a", .vector([1, 1])), Self.doc("b", .vector([.infinity, 0])), Self.doc("c", .vector([0, 2]))]
        #expect(Self.nearest(.dotProduct, [0, 1]).nearest(docs).map(\.path.lastSegment) == ["b", "c", "a"])
        #expect(Self.nearest(.cosine, [0, 1]).nearest(docs).map(\.path.lastSegment) == ["c", "a", "b"])
        #expect(Self.nearest(.euclidean, [0, 1]).nearest(docs).map(\.path.lastSegment) == ["a", "c", "b"])
    }

    @Test func theLimitTheResultFieldAndTheSkippedDocuments() {
        let n = Self.nearest(.euclidean, [1, 0], limit: 2, resultField: "distance")
        let got = n.nearest(Self.docs)
        #expect(got.map(\.path.lastSegment) == ["a", "f"])
        #expect(got[0].fields["distance"] == .double(0))
        // The distance replaces a field of the same name; no result field leaves the document as stored.
        #expect(Self.nearest(.euclidean, [2, 0], limit: 1, resultField: "distance").nearest(Self.docs)[0].fields["distance"] == .double(0))
        #expect(Self.nearest(.euclidean, [2, 0], limit: 1, resultField: nil).nearest(Self.docs)[0] == Self.docs[5])
        // Another dimension, an array and a missing field are not candidates.
        #expect(Self.nearest(.euclidean, [1, 0, 0]).nearest(Self.docs).map(\.path.lastSegment) == ["g3"])
    }

    @Test func precisionAsTheEmulatorComputesIt() {
        let p = [Self.doc("p", .vector([0.1, 0.2, 0.3]))]
        #expect(Self.nearest(.euclidean, [0.3, 0.2, 0.1]).nearest(p)[0].fields["d"] == .double(0.282842712474619))
        #expect(Self.nearest(.cosine, [0.3, 0.2, 0.1]).nearest(p)[0].fields["d"] == .double(0.2857142857142857))
        #expect(Self.nearest(.dotProduct, [0.3, 0.2, 0.1]).nearest(p)[0].fields["d"] == .double(0.1))
        #expect(Self.nearest(.cosine, [1, 2]).nearest([Self.doc("b", .vector([3, 4]))])[0].fields["d"] == .double(0.01613008990009257))
    }
}
