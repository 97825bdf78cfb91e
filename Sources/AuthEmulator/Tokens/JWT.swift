import Foundation
import HearthCore
import HearthCrypto

/// A compact-serialised JSON Web Token split into its parts (RFC 7519), signature not yet checked.
struct JWT: Sendable {
    /// The header members, in order.
    let header: JSONObject
    /// The payload claims, in order.
    let payload: JSONObject
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    let signingInput: String
    /// The decoded signature (empty for `alg: none`).
    let signature: [UInt8]

    /// Why a string is not a JWT.
    enum DecodeError: Error, Equatable {
        case notThreeParts
        case badBase64(String)
        case badJSON(String)
    }

    /// Splits and decodes `token`; any failure means "not a JWT".
    init(decoding token: String) throws(DecodeError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .notThreeParts }
        guard let headerData = Base64URL.decode(String(parts[0])) else { throw .badBase64("header") }
        guard let payloadData = Base64URL.decode(String(parts[1])) else { throw .badBase64("payload") }
        guard let header = try? JSON.parse(headerData).objectValue else { throw .badJSON("header") }
        guard let payload = try? JSON.parse(payloadData).objectValue else { throw .badJSON("payload") }
        let sig: [UInt8]
        if parts[2].isEmpty {
            sig = []
        } else {
            guard let data = Base64URL.decode(String(parts[2])) else { throw .badBase64("signature") }
            sig = [UInt8](data)
        }
        self.header = header
        self.payload = payload
        self.signingInput = parts[0] + "." + parts[1]
        self.signature = sig
    }

    /// The `alg` header.
    var algorithm: String? { header["alg"]?.stringValue }
    /// The `kid` header.
    var keyID: String? { header["kid"]?.stringValue }

    /// Serialises an unsigned token (`alg: none`, empty signature), as the Firebase emulator does.
    static func unsigned(payload: JSONObject, header: JSONObject = JWT.noneHeader) -> String {
        signingInput(header: header, payload: payload) + "."
    }

    /// Serialises a token signed with RS256 under `key`, naming it `kid`.
    static func rs256(payload: JSONObject, key: RSAKey, kid: String) throws -> String {
        let header = JSONObject([("alg", .string("RS256")), ("kid", .string(kid)), ("typ", .string("JWT"))])
        let input = signingInput(header: header, payload: payload)
        let signature = try key.signRS256(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// `{"alg":"none","typ":"JWT"}`: the header of the Firebase emulator's ID tokens.
    static let noneHeader = JSONObject([("alg", .string("none")), ("typ", .string("JWT"))])

    private static func signingInput(header: JSONObject, payload: JSONObject) -> String {
        Base64URL.encode(JSON.object(header).serialized().utf8) + "." + Base64URL.encode(JSON.object(payload).serialized().utf8)
    }
}
