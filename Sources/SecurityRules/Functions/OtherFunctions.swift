// latlng, bytes and path methods; conversions; the `math` and `hashing` namespaces.

import Foundation
import HearthCrypto

enum OtherFunctions {
    /// Mean Earth radius used by S2, which Google's geo code uses.
    static let earthRadiusMeters = 6_371_010.0

    static func latlng(_ m: Method, _ lat: Double, _ lng: Double, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .latitude: return .float(lat)
        case .longitude: return .float(lng)
        case .distance:
            guard case .latlng(let lat2, let lng2) = args[0] else { throw EvalError.invalidArgument("distance", "latlng expected") }
            // Haversine great-circle distance.
            let p1 = lat * .pi / 180, p2 = lat2 * .pi / 180
            let dp = (lat2 - lat) * .pi / 180, dl = (lng2 - lng) * .pi / 180
            let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
            return .float(2 * earthRadiusMeters * asin(min(1, sqrt(h))))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func bytes(_ m: Method, _ b: [UInt8]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(b.count))
        case .toBase64: return .string(Base64.url(b))
        case .toHexString: return .string(Hex.encode(b).uppercased())
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func path(_ m: Method, _ p: [String], _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .bind:
            // Replaces `{name}` segments with the string bound to `name`.
            guard case .map(let bindings) = args[0] else { throw EvalError.invalidArgument("bind", "map expected") }
            var out: [String] = []
            for seg in p {
                if seg.hasPrefix("{"), seg.hasSuffix("}"), seg.count > 2 {
                    let name = String(seg.dropFirst().dropLast())
                    if let v = bindings[name] {
                        guard case .string(let s) = v else { throw EvalError.invalidArgument("bind", "values must be strings") }
                        out.append(s)
                        continue
                    }
                }
                out.append(seg)
            }
            return .path(out)
        case .size: return .int(Int64(p.count))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func convert(_ b: Builtin, _ v: RulesValue) throws(EvalError) -> RulesValue {
        switch (b, v) {
        case (.int, .int): return v
        case (.int, .float(let d)):
            guard d.isFinite, d > -9.223372036854775808e18 - 1, d < 9.223372036854775808e18 else { throw EvalError.overflow }
            return .int(Int64(d.rounded(.towardZero)))
        case (.int, .string(let s)):
            guard let i = Int64(s) else { throw EvalError.invalidArgument("int", "\"\(s)\" is not an integer") }
            return .int(i)
        case (.float, .float): return v
        case (.float, .int(let i)): return .float(Double(i))
        case (.float, .string(let s)):
            guard let d = Double(s) else { throw EvalError.invalidArgument("float", "\"\(s)\" is not a number") }
            return .float(d)
        case (.string, .string): return v
        case (.string, .null): return .string("null")
        case (.string, .bool(let x)): return .string(x ? "true" : "false")
        case (.string, .int(let i)): return .string(String(i))
        case (.string, .float(let d)): return .string(RulesValue.formatDouble(d))
        case (.string, .bytes(let bytes)):
            guard let s = String(validating: bytes, as: UTF8.self) else { throw EvalError.invalidArgument("string", "bytes are not UTF-8") }
            return .string(s)
        case (.string, .timestamp(let s, let n)): return .string(Timestamps.format(seconds: s, nanos: n))
        case (.string, .duration(let s, let n)): return .string(Timestamps.formatDuration(seconds: s, nanos: n))
        case (.string, .path(let p)): return .string("/" + p.joined(separator: "/"))
        case (.path, .string(let s)): return .path(s.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
        case (.path, .path): return v
        case (.bool, .bool): return v
        case (.bool, .string("true")): return .bool(true)
        case (.bool, .string("false")): return .bool(false)
        default:
            if case .null = v, b != .string { throw EvalError.nullValue }
            throw EvalError.invalidArgument(b.rawValue, "cannot convert \(v.typeName)")
        }
    }

    static func math(_ b: Builtin, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        let v = args[0]
        switch (b, v) {
        case (.mathAbs, .int(let i)):
            guard i != Int64.min else { throw EvalError.overflow }
            return .int(abs(i))
        case (.mathAbs, .float(let d)): return .float(abs(d))
        case (.mathCeil, .int), (.mathFloor, .int), (.mathRound, .int): return v
        case (.mathCeil, .float(let d)): return .float(d.rounded(.up))
        case (.mathFloor, .float(let d)): return .float(d.rounded(.down))
        case (.mathRound, .float(let d)): return .float(d.rounded(.toNearestOrAwayFromZero))
        case (.mathSqrt, _):
            guard let d = v.number else { break }
            return .float(d.squareRoot())
        case (.mathPow, _):
            guard let x = v.number, let y = args[1].number else { break }
            return .float(Foundation.pow(x, y))
        case (.mathIsInfinite, .float(let d)): return .bool(d.isInfinite)
        case (.mathIsNaN, .float(let d)): return .bool(d.isNaN)
        case (.mathIsInfinite, .int), (.mathIsNaN, .int): return .bool(false)
        default: break
        }
        if case .null = v { throw EvalError.nullValue }
        throw EvalError.invalidArgument(b.rawValue, "number expected, got \(v.typeName)")
    }

    static func hash(_ b: Builtin, _ v: RulesValue) throws(EvalError) -> RulesValue {
        let data: [UInt8]
        switch v {
        case .bytes(let x): data = x
        case .string(let s): data = Array(s.utf8)
        case .null: throw EvalError.nullValue
        default: throw EvalError.invalidArgument(b.rawValue, "bytes or string expected, got \(v.typeName)")
        }
        switch b {
        case .hashingCrc32, .hashingCrc32c:
            var c = CRC32(b == .hashingCrc32 ? .ieee : .castagnoli)
            c.update(data)
            return .bytes(c.bigEndianBytes)
        case .hashingMd5: return .bytes(Digest.md5(data))
        default: return .bytes(Digest.sha256(data))
        }
    }
}
