import HearthSQLite

/// Decides, entry by entry, whether walking the order field's index still pays against the other
/// plan for `a == x ORDER BY b LIMIT n`: seeking a's matches, reading every one and sorting them.
///
/// Without statistics nothing tells the two costs before running. The walk's depends on where the
/// matches sit in b's order; the sort's grows with the number of matches, which takes a count of
/// a's index rows to learn — and counting 500 of them cost more than the whole walk of the bench's
/// query (~0.9k instructions a row). So the count runs beside the walk, one of a's index rows per
/// entry of b's the walk steps over: a walk that finishes first paid for as many rows again, about
/// a tenth of its own cost. Once the count is complete (m matches) the walk may spend what sorting
/// m documents would cost on top of what it already spent, and gives up past that (a ski rental:
/// whichever plan is cheaper, the work done stays within about twice its cost). The walk has spent
/// at most m entries (and read at most m documents) when the count completes.
///
/// Costs are in units of one index entry the walk steps over (~8k instructions: the step with its
/// document's row, the filter checked on the fields it names, the count's row), counted with
/// callgrind (docs/benchmarks.md, *runQuery by the order's index*).
final class OrderWalkBudget {
    /// A document the walk reads on top of its entry (~19k: decoding it whole, its name, matching
    /// and ordering it).
    static let fetchCost = 2
    /// One match of the sorting plan (~21k: read through the index join, decoded, matched, sorted).
    static let sortCostPerMatch = 3

    private let conn: Connection
    private let sql: String
    /// `space, scope, field, kind`, then per value the value and the key range.
    private let bindings: (prefix: [any SQLBindable], suffix: [any SQLBindable])
    private var values: ArraySlice<[UInt8]>
    private var statement: Statement?
    private var counted = 0
    /// Nil until the count is complete; then the most the walk may have spent in all.
    private var allowance: Int?
    private var spent = 0
    /// Whether the walk was told to give up.
    private(set) var exhausted = false

    /// Counts the index rows of `field` (`kind`) holding one of `values` in `scope`, limited to
    /// documents whose keys lie in `keyRange` (the seeks' matches).
    init(space: Int64, scope: [UInt8], field: String, kind: Int, values: [[UInt8]], keyRange: ([UInt8], [UInt8])?,
         _ conn: Connection) {
        self.conn = conn
        var sql = "SELECT 1 FROM fs_index WHERE space = ? AND scope = ? AND field = ? AND kind = ? AND value = ?"
        var suffix: [any SQLBindable] = []
        if let (lo, hi) = keyRange {
            sql += " AND doc_key >= ? AND doc_key < ?"
            suffix = [lo, hi]
        }
        self.sql = sql
        bindings = ([space, scope, field, Int64(kind)], suffix)
        self.values = values[...]
    }

    /// Charges one entry of the walk (`fetched`: its document was read); false once the walk
    /// should give up (`exhausted`).
    func charge(fetched: Bool) throws -> Bool {
        spent += fetched ? 1 + Self.fetchCost : 1
        if allowance == nil { try count(rows: 1) }
        if let allowance, spent > allowance {
            exhausted = true
            return false
        }
        return true
    }

    /// Steps the count on by up to `rows` index rows; sets `allowance` when it is complete.
    private func count(rows: Int) throws {
        var left = rows
        while left > 0 {
            if statement == nil {
                guard let v = values.popFirst() else {
                    allowance = spent + counted * Self.sortCostPerMatch
                    return
                }
                let s = try conn.prepare(sql)
                try s.bind(bindings.prefix + [v] + bindings.suffix)
                statement = s
            }
            if try statement!.step() {
                counted += 1
                left -= 1
            } else {
                statement?.reset()
                statement = nil
            }
        }
    }

    /// Releases the count's statement (it holds the read snapshot while open).
    func finish() {
        statement?.reset()
        statement = nil
    }
}
