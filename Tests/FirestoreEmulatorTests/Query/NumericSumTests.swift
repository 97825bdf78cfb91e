import Testing
@testable import FirestoreEmulator

/// `sum`/`avg` arithmetic as the official emulator answers it (probed, faith31): integers exactly
/// whatever their running total does, doubles with compensated summation, the two added at the end.
@Suite struct NumericSumTests {
    static func sum(_ values: [FirestoreValue]) -> NumericSum {
        var s = NumericSum()
        for v in values {
            switch v {
            case .integer(let i): s.add(i)
            case .double(let x): s.add(x)
            default: Issue.record("not a number: \(v)")
            }
        }
        return s
    }

    @Test func integersAreExactWhateverTheRunningTotalDoes() {
        let max = Int64.max, min = Int64.min
        // MAX + MAX overflows on the way, MIN + MIN back: the total −2 fits, so it is an integer.
        #expect(Self.sum([.integer(max), .integer(max), .integer(min), .integer(min)]).value == .integer(-2))
        #expect(Self.sum([.integer(max), .integer(max), .integer(min), .integer(min)]).average == .double(-0.5))
        #expect(Self.sum([.integer(max), .integer(1), .integer(-1)]).value == .integer(max))
        #expect(Self.sum([.integer(max), .integer(max), .integer(max), .integer(-max), .integer(-max)]).value == .integer(max))
        // A total past 64 bits is a double (3 · 2^62, 2^64, −3 · 2^63).
        #expect(Self.sum([.integer(1 << 62), .integer(1 << 62), .integer(1 << 62)]).value == .double(1.3835058055282164e19))
        #expect(Self.sum(Array(repeating: .integer(1 << 62), count: 4)).value == .double(18_446_744_073_709_551_616.0))
        #expect(Self.sum([.integer(max), .integer(max), .integer(min), .integer(min), .integer(min)]).value == .double(-9.223372036854776e18))
        #expect(Self.sum([.integer(3), .integer(4)]).value == .integer(7))
        #expect(Self.sum([.integer(3), .integer(4)]).average == .double(3.5))
    }

    @Test func doublesAreCompensated() {
        #expect(Self.sum([.double(0.1), .double(0.2), .double(0.3)]).value == .double(0.6))
        #expect(Self.sum([.double(0.1), .double(0.2), .double(0.3)]).average == .double(0.19999999999999998))
        #expect(Self.sum([.double(1e16), .double(1), .double(1)]).value == .double(1.0000000000000002e16))
        #expect(Self.sum([.double(1e16), .double(1), .double(1)]).average == .double(3333333333333334.0))
        // An infinity reached on the way stays: the plain sum stands where compensation met one.
        #expect(Self.sum([.double(1.7e308), .double(1.7e308), .double(-1.7e308)]).value == .double(.infinity))
        #expect(Self.sum([.double(.infinity), .double(1)]).value == .double(.infinity))
        guard case .double(let nan) = Self.sum([.double(.infinity), .double(-.infinity)]).value else { Issue.record("not a double"); return }
        #expect(nan.isNaN)
        guard case .double(let zero) = Self.sum([.double(-0.0), .double(-0.0)]).value else { Issue.record("not a double"); return }
        #expect(zero == 0 && zero.sign == .plus)
    }

    @Test func integersAndDoublesMeetAtTheEnd() {
        let max = Int64.max, min = Int64.min
        #expect(Self.sum([.integer(max), .integer(max), .integer(min), .integer(min), .double(0.5)]).value == .double(-1.5))
        #expect(Self.sum([.integer(max), .integer(max), .integer(min), .integer(min), .double(0.5)]).average == .double(-0.3))
        #expect(Self.sum([.double(1e16), .integer(1), .integer(1)]).value == .double(1.0000000000000002e16))
        #expect(Self.sum([.integer(1), .integer(1), .double(1e16)]).value == .double(1.0000000000000002e16))
        #expect(Self.sum([.integer((1 << 53) + 1), .double(0.5), .integer(1)]).value == .double(9007199254740994.0))
        #expect(Self.sum([.integer((1 << 53) + 1), .double(0.5), .integer(1)]).average == .double(3002399751580331.5))
        #expect(NumericSum().value == .integer(0))
        #expect(NumericSum().average == .null)
    }
}
