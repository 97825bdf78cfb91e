import Foundation

/// How a status travels: the `grpc-status`, `grpc-message` and `grpc-status-details-bin` fields.
/// Related: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md (Responses)
extension GRPCStatus {
    /// The trailer fields for this status.
    var trailerFields: [(String, String)] {
        // Every successful call ends so: one array for all of them instead of one per call.
        if code == .ok && message.isEmpty && details == nil { return Self.okTrailerFields }
        var fields = [("grpc-status", String(code.rawValue))]
        if !message.isEmpty { fields.append(("grpc-message", GRPCStatus.percentEncoded(message))) }
        if let details {
            // Binary metadata is base64; the spec lets senders omit padding and gRPC implementations do.
            var text = Data(details).base64EncodedString()
            while text.hasSuffix("=") { text.removeLast() }
            fields.append(("grpc-status-details-bin", text))
        }
        return fields
    }

    static let okTrailerFields = [("grpc-status", "0")]

    /// Percent-encodes every byte outside printable ASCII, and `%` itself, as the spec asks.
    static func percentEncoded(_ message: String) -> String {
        var out = ""
        for b in message.utf8 {
            if b >= 0x20 && b <= 0x7E && b != 0x25 {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    /// A `grpc-timeout` value (1-8 digits and a unit H M S m u n) in nanoseconds; nil if malformed.
    static func timeoutNanos(_ text: String) -> UInt64? {
        guard let unit = text.last, text.count >= 2, text.count <= 9 else { return nil }
        let digits = text.dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt64(digits) else { return nil }
        let scale: UInt64
        switch unit {
        case "H": scale = 3_600_000_000_000
        case "M": scale = 60_000_000_000
        case "S": scale = 1_000_000_000
        case "m": scale = 1_000_000
        case "u": scale = 1_000
        case "n": scale = 1
        default: return nil
        }
        return value.multipliedReportingOverflow(by: scale).overflow ? UInt64.max : value * scale
    }
}
