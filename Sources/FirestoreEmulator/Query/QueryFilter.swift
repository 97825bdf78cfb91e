/// A query filter tree.
indirect enum QueryFilter: Sendable {
    case field(FieldPath, FieldOperator, FirestoreValue)
    case unary(FieldPath, UnaryOperator)
    case and([QueryFilter])
    case or([QueryFilter])

    /// Every field-level filter in the tree.
    var leaves: [QueryFilter] {
        switch self {
        case .field, .unary: [self]
        case .and(let fs), .or(let fs): fs.flatMap(\.leaves)
        }
    }

    /// The field a leaf filters on.
    var fieldPath: FieldPath? {
        switch self {
        case .field(let f, _, _), .unary(let f, _): f
        default: nil
        }
    }

    /// Whether a leaf is an inequality (implies an ordering on its field).
    var isInequality: Bool {
        switch self {
        case .field(_, let op, _): op.isInequality
        case .unary(_, let op): op == .isNotNull || op == .isNotNaN
        default: false
        }
    }

    /// The filter in disjunctive normal form: a list of conjunctions of leaves.
    /// Stops growing past `limit` conjunctions (the caller rejects the query then).
    func disjunctiveNormalForm(limit: Int) -> [[QueryFilter]] {
        switch self {
        case .field, .unary:
            return [[self]]
        case .or(let fs):
            var out: [[QueryFilter]] = []
            for f in fs {
                out.append(contentsOf: f.disjunctiveNormalForm(limit: limit))
                if out.count > limit { return out }
            }
            return out
        case .and(let fs):
            var out: [[QueryFilter]] = [[]]
            for f in fs {
                let terms = f.disjunctiveNormalForm(limit: limit)
                var next: [[QueryFilter]] = []
                for a in out {
                    for b in terms {
                        next.append(a + b)
                        if next.count > limit { return next }
                    }
                }
                out = next
            }
            return out
        }
    }
}
