/// Field paths naming a reserved field (`__.*__`): no document may hold one, so Firestore refuses
/// them wherever a request names a field. The wording, and which names stand where, are the
/// official emulator's (probed name by name: masks, transforms, read masks, filters, orders,
/// projections, aggregations; production's own wording is undocumented).
extension FieldPath {
    /// Where a request names the path. A filter, an order or an aggregation may reach `__type__`
    /// below the top level (the emulator accepts `v.__type__` there); a write's mask or transform,
    /// a read mask or a projection may not end on it.
    enum Use { case write, projection, query }

    /// Throws Firestore's refusal when a segment is a reserved name. A lone `__name__` (the
    /// document key) passes: each caller decides where the key may stand.
    func rejectReservedNames(as use: Use) throws(FirestoreError) {
        if segments.contains("__key__") {
            throw .invalidArgument("Invalid property path member name \"__key__\".")
        }
        for (i, segment) in segments.enumerated() where DocumentFields.isReservedName(segment) {
            switch segment {
            case "__name__":
                if segments.count == 1 { continue }
                // The emulator stores the key as __key__ and says so.
                throw .invalidArgument("the name __key__ is reserved")
            case VectorValue.typeKey:
                if i == 0 || (use != .query && i == segments.count - 1) {
                    throw .invalidArgument("the name __type__ is reserved")
                }
            default:
                // The path from the reserved segment on, unquoted, as the emulator prints it.
                throw .invalidArgument("Invalid reserved name in field path \(segments[i...].joined(separator: "."))")
            }
        }
    }
}
