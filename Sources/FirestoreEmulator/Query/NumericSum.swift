/// The sum of a field's numeric values as Firestore's `sum` and `avg` aggregations take it: the
/// integers exactly, whatever their running total does on the way ("Returns a 64-bit integer if all
/// aggregated numbers are integers and the sum result does not overflow"), and the doubles with
/// compensated (Kahan) summation and IEEE-754's infinities, as the official emulator's Java adds
/// them (`DoubleStream.sum`): 0.1 + 0.2 + 0.3 is 0.6 in any order, 1e16 + 1 + 1 is 1e16 + 2,
/// MAX + MAX + MIN + MIN is −2, and the two parts are added at the end (−2 and 0.5 are −1.5).
struct NumericSum {
    /// The integers' total is `low + wraps · 2⁶⁴` (`low` wrapping as two's complement).
    private var low: Int64 = 0
    private var wraps: Int64 = 0
    private var doubles = 0.0
    private var compensation = 0.0
    private var simple = 0.0
    private(set) var hasDouble = false
    private(set) var count = 0

    mutating func add(_ i: Int64) {
        count += 1
        let (s, overflow) = low.addingReportingOverflow(i)
        low = s
        if overflow { wraps += i < 0 ? -1 : 1 }
    }

    mutating func add(_ x: Double) {
        count += 1
        hasDouble = true
        addCompensated(x)
    }

    private mutating func addCompensated(_ x: Double) {
        let t = x - compensation
        let next = doubles + t
        compensation = (next - doubles) - t
        doubles = next
        simple += x
    }

    /// The integers' total as a double (rounded once when it fits in 64 bits).
    private var integersAsDouble: Double {
        wraps == 0 ? Double(low) : Double(wraps) * 18_446_744_073_709_551_616.0 + Double(low)
    }

    /// The double total: the compensated sum, or the plain one when compensation met an infinity.
    var doubleValue: Double {
        var total = self
        if wraps != 0 || low != 0 { total.addCompensated(integersAsDouble) }
        let result = total.doubles - total.compensation
        if result.isNaN && total.simple.isInfinite { return total.simple }
        return result
    }

    /// `sum`: an integer when every value was one and the total fits in 64 bits, else a double.
    var value: FirestoreValue {
        if !hasDouble && wraps == 0 { return .integer(low) }
        return .double(doubleValue)
    }

    /// `avg`: the total over the count as a double; null without values.
    var average: FirestoreValue {
        count == 0 ? .null : .double(doubleValue / Double(count))
    }
}
