// Timestamp and duration methods, the `timestamp` and `duration` namespaces, and their arithmetic.
// All calendar fields are UTC.

enum TimeFunctions {
    static let nanosPerSecond: Int64 = 1_000_000_000

    static func timestamp(_ m: Method, _ s: Int64, _ n: Int32) throws(EvalError) -> RulesValue {
        let days = Timestamps.floorDiv(s, 86_400)
        let sod = s - days * 86_400
        let (y, mo, d) = Timestamps.civil(fromDays: days)
        switch m {
        case .year: return .int(y)
        case .month: return .int(mo)
        case .day: return .int(d)
        case .hours: return .int(sod / 3600)
        case .minutes: return .int(sod / 60 % 60)
        case .seconds: return .int(sod % 60)
        case .nanos: return .int(Int64(n))
        // ISO weekday: Monday is 1, Sunday 7. 1970-01-01 was a Thursday (4).
        case .dayOfWeek: return .int(((days % 7) + 7 + 3) % 7 + 1)
        case .dayOfYear: return .int(days - Timestamps.days(fromCivil: y, 1, 1) + 1)
        case .toMillis: return .int(s * 1000 + Int64(n) / 1_000_000)
        case .date: return .timestamp(seconds: days * 86_400, nanos: 0)
        case .time: return .duration(seconds: sod, nanos: n)
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func duration(_ m: Method, _ s: Int64, _ n: Int32) throws(EvalError) -> RulesValue {
        switch m {
        case .seconds: return .int(s)
        case .nanos: return .int(Int64(n))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func builtin(_ b: Builtin, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch b {
        case .timestampDate:
            guard case .int(let y) = args[0], case .int(let mo) = args[1], case .int(let d) = args[2] else {
                throw EvalError.signature(b.rawValue, args, expected: ["int, int, int"])
            }
            guard (1...9999).contains(y), (1...12).contains(mo), d >= 1, d <= Timestamps.daysInMonth(y, mo) else {
                throw EvalError("Date is not valid. year: \(y), month: \(mo) day: \(d).")
            }
            return .timestamp(seconds: Timestamps.days(fromCivil: y, mo, d) * 86_400, nanos: 0)
        case .timestampValue:
            // Milliseconds since the epoch, or an RFC 3339 string with a `T` and a `Z` or an offset
            // (upper case only), as the official emulator takes it.
            if case .string(let text) = args[0] {
                // protobuf-java-util's lenient reading (TimestampText), then the range.
                guard let t = TimestampText.parse(text) else { throw timestampRange }
                return try checkedTimestamp(t.seconds, t.nanos)
            }
            guard case .int(let ms) = args[0] else { throw EvalError.signature(b.rawValue, args, expected: ["int", "string"]) }
            // Quotient and remainder separately: `ms - floorDiv(ms, 1000) * 1000` overflowed (a trap)
            // for milliseconds within a second of Int64.min.
            var s = ms / 1000, r = ms % 1000
            if r < 0 { s -= 1; r += 1000 }
            return try checkedTimestamp(s, Int32(r * 1_000_000))
        case .durationValue:
            // An int magnitude only (`duration.value(1.5, 's')` is an error on the official emulator).
            guard case .string(let unit) = args[1], case .int = args[0] else {
                throw EvalError.signature(b.rawValue, args, expected: ["int, string"])
            }
            let scale: Int64
            switch unit {
            case "w": scale = 7 * 86_400 * nanosPerSecond
            case "d": scale = 86_400 * nanosPerSecond
            case "h": scale = 3600 * nanosPerSecond
            case "m": scale = 60 * nanosPerSecond
            case "s": scale = nanosPerSecond
            case "ms": scale = 1_000_000
            case "ns": scale = 1
            default: throw EvalError.invalidArgument(b.rawValue, "unit must be one of w, d, h, m, s, ms, ns")
            }
            switch args[0] {
            case .int(let n): return try fromNanos(n, times: scale)
            default: throw EvalError.signature(b.rawValue, args, expected: ["int, string"])
            }
        case .durationTime:
            // Hours, minutes and seconds as seconds, nanoseconds apart, so nothing within a
            // duration's range overflows (a product in nanoseconds did past 2,562,047 hours). Past
            // the range the emulator words its error as a timestamp's.
            var seconds: Int64 = 0, nanos: Int64 = 0
            let scales: [Int64] = [3600, 60, 1]
            for (i, a) in args.enumerated() {
                guard case .int(let v) = a else { throw EvalError.signature(b.rawValue, args, expected: ["int, int, int, int"]) }
                if i == 3 { nanos = v; continue }
                let (p, o1) = v.multipliedReportingOverflow(by: scales[i])
                let (t, o2) = seconds.addingReportingOverflow(p)
                if o1 || o2 { throw timestampRange }
                seconds = t
            }
            let (t, o) = seconds.addingReportingOverflow(nanos / nanosPerSecond)
            if o { throw timestampRange }
            guard case .duration(let s, let n) = normalizedDuration(t, Int32(nanos % nanosPerSecond)),
                  abs(s) <= maxDurationSeconds else { throw timestampRange }
            return .duration(seconds: s, nanos: n)
        case .durationAbs:
            guard case .duration(let s, let n) = args[0] else { throw EvalError.signature(b.rawValue, args, expected: ["duration"]) }
            if s < 0 || n < 0 { return .duration(seconds: -s, nanos: -n) }
            return args[0]
        default:
            throw EvalError.noFunction(b.rawValue)
        }
    }

    /// A duration from n × scale nanoseconds, normalised so seconds and nanos share a sign, within
    /// the range of a protobuf Duration (±315,576,000,000 s, ten thousand years) as on the emulator.
    static func fromNanos(_ n: Int64, times scale: Int64) throws(EvalError) -> RulesValue {
        // Whole seconds first, so week-sized values do not overflow the nanosecond product.
        if scale % nanosPerSecond == 0 {
            let (s, o) = n.multipliedReportingOverflow(by: scale / nanosPerSecond)
            if o { throw durationRange }
            return try checkedDuration(s, 0)
        }
        // A unit below a second divides one: no product at all.
        let perSecond = nanosPerSecond / scale
        return try checkedDuration(n / perSecond, Int32(n % perSecond * scale))
    }

    /// The largest magnitude of a duration's seconds: protobuf's Duration range, which the
    /// emulator checks on every duration it makes (`duration.value`, `+`, `-`).
    static let maxDurationSeconds: Int64 = 315_576_000_000

    /// A duration past that range, in the emulator's words.
    static let durationRange = EvalError("Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. "
                                         + "Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds.")

    /// A duration of (s, n), already sharing a sign, or the range error.
    static func checkedDuration(_ s: Int64, _ n: Int32) throws(EvalError) -> RulesValue {
        guard abs(s) <= maxDurationSeconds else { throw durationRange }
        return .duration(seconds: s, nanos: n)
    }

    /// A timestamp outside 0001-01-01 … 9999-12-31 (or a string that is none), in the emulator's words.
    static let timestampRange = EvalError("Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. "
                                          + "Nanos must be in range [0, +999,999,999].")

    static func checkedTimestamp(_ s: Int64, _ n: Int32) throws(EvalError) -> RulesValue {
        guard s >= Timestamps.minSeconds, s <= Timestamps.maxSeconds else { throw timestampRange }
        return .timestamp(seconds: s, nanos: n)
    }

    /// Adds a signed (seconds, nanos) offset to a (seconds, nanos) pair, normalising nanos into range.
    static func add(_ s1: Int64, _ n1: Int32, _ s2: Int64, _ n2: Int32, negate: Bool) throws(EvalError) -> (Int64, Int32) {
        // Both operands are within their ranges (checked where each was made), so none of this
        // can overflow; the checks only keep a bad value from trapping.
        var (s, o) = negate ? s1.subtractingReportingOverflow(s2) : s1.addingReportingOverflow(s2)
        let bn = negate ? -n2 : n2
        if o { throw EvalError.overflow }
        var n = Int64(n1) + Int64(bn)
        if n >= nanosPerSecond { n -= nanosPerSecond; s += 1 } else if n < 0 { n += nanosPerSecond; s -= 1 }
        return (s, Int32(n))
    }

    /// A normalised duration, or the range error.
    static func checkedDuration(_ d: RulesValue) throws(EvalError) -> RulesValue {
        guard case .duration(let s, let n) = d else { return d }
        return try checkedDuration(s, n)
    }

    /// Normalises a duration so seconds and nanos have the same sign.
    static func normalizedDuration(_ s: Int64, _ n: Int32) -> RulesValue {
        var s = s, n = Int64(n)
        if s > 0, n < 0 { s -= 1; n += nanosPerSecond } else if s < 0, n > 0 { s += 1; n -= nanosPerSecond }
        return .duration(seconds: s, nanos: Int32(n))
    }

    /// `+` and `-` on timestamps and durations; nil when the operands are not temporal.
    static func arithmetic(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue? {
        switch (op, a, b) {
        case (.add, .timestamp(let s1, let n1), .duration(let s2, let n2)),
             (.add, .duration(let s2, let n2), .timestamp(let s1, let n1)):
            let (s, n) = try add(s1, n1, s2, n2, negate: false)
            return try checkedTimestamp(s, n)
        case (.subtract, .timestamp(let s1, let n1), .duration(let s2, let n2)):
            let (s, n) = try add(s1, n1, s2, n2, negate: true)
            return try checkedTimestamp(s, n)
        case (.subtract, .timestamp(let s1, let n1), .timestamp(let s2, let n2)):
            let (s, n) = try add(s1, n1, s2, n2, negate: true)
            return try checkedDuration(normalizedDuration(s, n))
        case (.add, .duration(let s1, let n1), .duration(let s2, let n2)):
            let (s, n) = try add(s1, n1, s2, n2, negate: false)
            return try checkedDuration(normalizedDuration(s, n))
        case (.subtract, .duration(let s1, let n1), .duration(let s2, let n2)):
            let (s, n) = try add(s1, n1, s2, n2, negate: true)
            return try checkedDuration(normalizedDuration(s, n))
        default:
            return nil
        }
    }
}
