import Foundation
import HearthCore

/// A query's `findNearest` clause (`StructuredQuery.FindNearest`): of the documents the rest of
/// the query returns, the `limit` whose vector at `field` is nearest the query vector.
///
/// Found by brute force: every result of the query is measured (production needs a vector index
/// and answers from it; no index is asked for here, as for every other query). Documents whose
/// field is not a vector of the query vector's dimension are left out. Ties keep the query's own
/// order (its filters' implicit orderings, then the name), as the official emulator returns them.
struct FindNearest: Sendable {
    enum Measure: String, Sendable {
        /// The straight-line distance; nearest first.
        case euclidean = "EUCLIDEAN"
        /// One minus the cosine of the angle between the vectors; nearest first.
        case cosine = "COSINE"
        /// The dot product, larger when more similar; largest first.
        case dotProduct = "DOT_PRODUCT"

        static let numbers: [Int64: String] = [0: "DISTANCE_MEASURE_UNSPECIFIED", 1: "EUCLIDEAN", 2: "COSINE", 3: "DOT_PRODUCT"]
    }

    var field: FieldPath
    var vector: [Double]
    var measure: Measure
    var limit: Int
    /// The field each result gets its distance in: a field *name* (the emulator writes `a.b` as
    /// one top-level field), replacing a field of that name; nil for none.
    var resultField: String?
    /// Only documents at most this far (at least this similar, for the dot product).
    var threshold: Double?

    /// "A positive integer of no more than 1000".
    static let maxLimit = 1000

    /// Reads the clause, with the official emulator's messages for each fault.
    static func parse(_ o: ProtoObject, parser: QueryParser) throws(FirestoreError) -> FindNearest {
        try o.requireKnown(["vectorField", "queryVector", "distanceMeasure", "limit", "distanceResultField", "distanceThreshold"])
        guard let rawVector = o.raw("queryVector") else {
            throw .invalidArgument("Cannot convert firestore.v1.Value with type unset.")
        }
        guard case .vector(let vector) = try ValueJSON.decode(rawVector, path: o.childPath("queryVector")) else {
            throw .invalidArgument("Query Value must be of type vector.")
        }
        guard let ref = try o.object("vectorField") else { throw .invalidArgument("Invalid empty property path string.") }
        let field = try parser.parseFieldReference(ref)
        guard let measureName = try o.enumeration("distanceMeasure", Measure.numbers), let measure = Measure(rawValue: measureName) else {
            throw .invalidArgument("Unknown Distance Measure.")
        }
        guard let limit = try o.int32("limit"), limit > 0, limit <= maxLimit else {
            throw .invalidArgument("FindNearest.limit must be a positive integer of no more than \(maxLimit)")
        }
        var resultField = try o.string("distanceResultField")
        if resultField?.isEmpty == true { resultField = nil }
        if let name = resultField { try DocumentFields.checkResultName(name, label: "distanceResultField.") }
        let threshold = try o.double("distanceThreshold")
        if let threshold, !threshold.isFinite { throw .invalidArgument("distanceThreshold must be a finite number.") }
        return FindNearest(field: field, vector: vector, measure: measure, limit: Int(limit), resultField: resultField,
                           threshold: threshold)
    }

    /// The distance from the query vector to `other` (same dimension) by this measure.
    func distance(to other: [Double]) -> Double {
        var dot = 0.0
        switch measure {
        case .euclidean:
            var sum = 0.0
            for i in vector.indices {
                let d = vector[i] - other[i]
                sum += d * d
            }
            return sum.squareRoot()
        case .cosine:
            var a = 0.0, b = 0.0
            for i in vector.indices {
                dot += vector[i] * other[i]
                a += vector[i] * vector[i]
                b += other[i] * other[i]
            }
            // A zero vector has no angle: 0/0 is NaN, which the emulator answers too.
            return 1 - dot / (a.squareRoot() * b.squareRoot())
        case .dotProduct:
            for i in vector.indices { dot += vector[i] * other[i] }
            return dot
        }
    }

    /// Whether `a` ranks before `b`: nearest first, the dot product's largest first, NaN taken as
    /// the largest distance of all (so last, but first by dot product), as the emulator ranks it.
    func ranksBefore(_ a: Double, _ b: Double) -> Bool {
        let (low, high) = measure == .dotProduct ? (b, a) : (a, b)
        if high.isNaN { return !low.isNaN }
        return low < high
    }

    /// Whether a document at `distance` is within the threshold (NaN never is).
    func withinThreshold(_ distance: Double) -> Bool {
        guard let threshold else { return true }
        return measure == .dotProduct ? distance >= threshold : distance <= threshold
    }

    /// The nearest of `documents` (the query's results, in its order), at most `limit`, each with
    /// its distance in `resultField` when one is named.
    func nearest(_ documents: [StoredDocument]) -> [StoredDocument] {
        var ranked: [(index: Int, distance: Double, document: StoredDocument)] = []
        for (i, doc) in documents.enumerated() {
            guard case .vector(let v)? = DocumentFields.value(at: field, in: doc.fields), v.count == vector.count else { continue }
            let d = distance(to: v)
            if withinThreshold(d) { ranked.append((i, d, doc)) }
        }
        ranked.sort { x, y in
            if ranksBefore(x.distance, y.distance) { return true }
            if ranksBefore(y.distance, x.distance) { return false }
            return x.index < y.index
        }
        return ranked.prefix(limit).map { entry in
            guard let resultField else { return entry.document }
            var doc = entry.document
            doc.fields[ExactString(resultField)] = .double(entry.distance)
            return doc
        }
    }
}
