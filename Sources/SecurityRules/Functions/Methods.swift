// Method dispatch: `receiver.method(args)` by the receiver's type.

enum Methods {
    static func call(_ m: Method, _ recv: RulesValue, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch recv {
        case .string(let s): return try StringFunctions.call(m, s, args)
        case .list(let l): return try CollectionFunctions.list(m, l, args)
        case .set(let l): return try CollectionFunctions.set(m, l, args)
        case .map(let d): return try CollectionFunctions.map(m, d, args)
        case .mapDiff(let l, let r): return try CollectionFunctions.mapDiff(m, l, r)
        case .timestamp(let s, let n): return try TimeFunctions.timestamp(m, s, n)
        case .duration(let s, let n): return try TimeFunctions.duration(m, s, n)
        case .latlng(let lat, let lng): return try OtherFunctions.latlng(m, lat, lng, args)
        case .bytes(let b): return try OtherFunctions.bytes(m, b)
        case .path(let p, let names): return try OtherFunctions.path(m, p, names, args)
        case .constraint(let c): return try c.call(m, args)
        case .null: throw EvalError.nullValue
        default: throw EvalError.noFunction(m.rawValue, on: recv)
        }
    }

    /// Pure built-ins (the document-access ones and `debug` are handled by the evaluator).
    static func builtin(_ b: Builtin, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch b {
        case .int, .float, .string, .path: return try OtherFunctions.convert(b, args[0])
        case .mathAbs, .mathCeil, .mathFloor, .mathRound, .mathSqrt, .mathPow, .mathIsInfinite, .mathIsNaN:
            return try OtherFunctions.math(b, args)
        case .timestampDate, .timestampValue, .durationValue, .durationTime, .durationAbs:
            return try TimeFunctions.builtin(b, args)
        case .latlngValue:
            guard let lat = args[0].number, let lng = args[1].number else { throw EvalError.signature(b.rawValue, args, expected: ["float, float"]) }
            guard (-90...90).contains(lat), (-180...180).contains(lng) else {
                throw EvalError("Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: "
                                + "\(OtherFunctions.javaString(lat)), longitude: \(OtherFunctions.javaString(lng)).")
            }
            return .latlng(latitude: lat, longitude: lng)
        case .hashingCrc32, .hashingCrc32c, .hashingMd5, .hashingSha256:
            return try OtherFunctions.hash(b, args[0])
        case .get, .exists, .getAfter, .existsAfter, .firestoreGet, .firestoreExists, .debug:
            throw EvalError.noFunction(b.rawValue)
        }
    }
}

extension RulesValue {
    /// An int or float as a Double.
    var number: Double? {
        switch self {
        case .int(let i): Double(i)
        case .float(let d): d
        default: nil
        }
    }
}
