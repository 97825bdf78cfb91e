import Foundation
import HearthCore
import HearthCrypto

/// Finds why a form's SigV4 signature did not match its policy; run only after verification failed.
///
/// It recomputes the signature the ways clients get it wrong — another configured secret, a
/// signing key derived for another region, date or service, the policy's JSON instead of its base64,
/// the base64 re-wrapped, the raw secret as key, SigV2's HMAC-SHA1 — and reports the first that
/// reproduces the client's value.
struct PostSignatureDiagnosis: Sendable {
    let credentials: S3Credentials
    let signingKeys: SigningKeyCache

    /// The cause of the mismatch, or what to compare when no suspect matched.
    /// - Parameter secret: the secret configured for the access key the credential names.
    func diagnose(policy: String, provided rawProvided: String, scope: CredentialScope, secret: String) -> String {
        let provided = rawProvided.lowercased()
        let policyBytes = Array(policy.utf8)
        func matches(_ key: [UInt8], _ data: [UInt8]) -> Bool { SigningKey.sign(key, data) == provided }
        func key(secret: String = secret, date: String = scope.date, region: String = scope.region, service: String = "s3") -> [UInt8] {
            signingKeys.key(secret: secret, date: date, region: region, service: service)
        }

        for other in credentials.keys where other.accessKey != scope.accessKey && matches(key(secret: other.secret), policyBytes) {
            return "The policy was signed with the secret of access key '\(other.accessKey)', but x-amz-credential names '\(scope.accessKey)'. Sign with the secret of the key the credential names."
        }
        for region in SignatureDiagnosis.regions where region != scope.region && matches(key(region: region), policyBytes) {
            return "The signing key was derived for region '\(region)', but x-amz-credential names '\(scope.region)'. Derive the key and write the credential scope from the same region (boto3: the client's region_name)."
        }
        if let day = SigV4Time.parseAmzDate(scope.date + "T000000Z") {
            for offset in [-1, 1] {
                let other = String(SigV4Time.amzDate(Instant(unixSeconds: day.unixSeconds + Int64(offset * 86_400))).prefix(8))
                if matches(key(date: other), policyBytes) {
                    return "The signing key was derived for the date \(other), but x-amz-credential and x-amz-date say \(scope.date). Derive the key from the same UTC date as x-amz-date (a local-time date is a common cause)."
                }
            }
        }
        if matches(key(service: "s3-object-lambda"), policyBytes) || matches(key(service: "execute-api"), policyBytes) {
            return "The signing key was derived for another service than 's3'."
        }
        if let json = PostSignatureDiagnosis.decodedPolicy(policy), matches(key(), json) {
            return "The signature covers the policy's JSON; S3 signs the policy field exactly as sent, that is its base64 text."
        }
        let unwrapped = policyBytes.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 && $0 != 0x09 }
        if unwrapped != policyBytes, matches(key(), unwrapped) {
            return "The signature covers the policy's base64 without its line breaks or spaces, but the form sends it with them. Send the policy field exactly as signed."
        }
        if matches(Array(secret.utf8), policyBytes) {
            return "The signature is an HMAC of the policy under the secret itself; SigV4 signs with the derived signing key (HMAC chain of \"AWS4\"+secret, date, region, \"s3\", \"aws4_request\")."
        }
        let sigV2 = SigV2.signature(secret: secret, stringToSign: policy)
        if rawProvided == sigV2 || provided == Hex.encode(HMAC.sha1(key: Array(secret.utf8), data: policyBytes)) {
            return "The signature is SigV2's HMAC-SHA1 of the policy, sent with SigV4 fields. Either sign with SigV4 (hex HMAC-SHA256 under the derived signing key) or send SigV2 fields (AWSAccessKeyId, signature)."
        }
        if let bytes = Data(base64Encoded: rawProvided), bytes.count == 32, Hex.encode([UInt8](bytes)) == SigningKey.sign(key(), policyBytes) {
            return "The signature is right but base64-encoded; x-amz-signature must be lower-case hex."
        }
        return "The signature is not the hex HMAC-SHA256 of the policy field under the signing key for \(scope.scope). Hearth tried the other configured secrets, other regions, dates and services, the policy's JSON, the policy without line breaks and SigV2, and none matched: most likely the secret key for '\(scope.accessKey)' is wrong, or the policy field was changed after signing."
    }

    /// The policy's decoded bytes, when it is valid base64.
    static func decodedPolicy(_ policy: String) -> [UInt8]? {
        Data(base64Encoded: policy.trimmingCharacters(in: .whitespacesAndNewlines)).map { [UInt8]($0) }
    }
}
