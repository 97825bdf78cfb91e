import Foundation
import HearthCore
import HearthCrypto

/// Verifies the signature fields of a browser form upload (POST Object).
///
/// Related: "Authenticating Requests: Browser-Based Uploads Using POST (AWS Signature Version 4)":
/// the string to sign is the `policy` field exactly as sent (its base64), signed with the SigV4
/// signing key of the `x-amz-credential` scope. Scope and date errors are the presigned-URL ones
/// (`AuthorizationQueryParametersError`, "Error parsing the X-Amz-Credential parameter; …"), a
/// wrong signature is `SignatureDoesNotMatch` whose string to sign is the policy, with Hearth's
/// diagnosis of the likely cause.
struct PostFormAuthenticator: Sendable {
    let credentials: S3Credentials
    let region: String
    let signingKeys: SigningKeyCache
    /// Validate SigV2 form signatures (HMAC-SHA1 of the policy) instead of refusing them.
    let allowSigV2: Bool

    /// How the form authenticated.
    enum Outcome: Sendable, Equatable {
        /// The policy verified under `accessKey`'s secret; it must now be checked against the form.
        case signed(accessKey: String, policy: String, sigV2: Bool)
        /// The form carries no signature fields (it may still ride on a signed request).
        case unsigned
    }

    /// The SigV4 fields, in the order their absence is reported, as S3 names them.
    static let sigV4Fields = ["X-Amz-Signature", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date"]

    /// Checks the form's signature fields.
    /// - Parameter bucket: the bucket the form was posted to (a key may be limited to some buckets).
    func authenticate(_ form: PostForm, bucket: String) -> Result<Outcome, S3Error> {
        let hasV4 = Self.sigV4Fields.contains { form.contains($0) }
        let hasV2 = !hasV4 && (form.contains("signature") || form.contains("AWSAccessKeyId"))
        if hasV4 {
            for name in Self.sigV4Fields where !form.contains(name) { return .failure(.postForm(.missingField(name: name))) }
            guard let policy = form.values("policy").first else { return .failure(.postForm(.missingField(name: "policy"))) }
            do throws(SigV4Failure) {
                return .success(try verifySigV4(form, policy: policy, bucket: bucket))
            } catch {
                return .failure(.signature(error))
            }
        }
        if hasV2 {
            guard allowSigV2 else { return .failure(.postForm(.sigV2NotSupported)) }
            for name in ["AWSAccessKeyId", "Signature"] where !form.contains(name) {
                return .failure(.postForm(.missingField(name: name)))
            }
            guard let policy = form.values("policy").first else { return .failure(.postForm(.missingField(name: "policy"))) }
            do throws(SigV4Failure) {
                return .success(try verifySigV2(form, policy: policy, bucket: bucket))
            } catch {
                return .failure(.signature(error))
            }
        }
        if form.contains("policy") { return .failure(.postForm(.policyWithoutSignature)) }
        return .success(.unsigned)
    }

    private func verifySigV4(_ form: PostForm, policy: String, bucket: String) throws(SigV4Failure) -> Outcome {
        let algorithm = form.values("x-amz-algorithm").first ?? ""
        guard algorithm == AuthorizationParser.algorithm else { throw .queryUnsupportedAlgorithm(given: algorithm) }
        let scope = try AuthorizationParser.parseCredential(form.values("x-amz-credential").first ?? "", presigned: true,
                                                            expectedRegion: region, service: "s3")
        let date = form.values("x-amz-date").first ?? ""
        guard SigV4Time.parseAmzDate(date) != nil else { throw .queryDateFormat(given: date) }
        guard date.utf8.prefix(8).elementsEqual(scope.date.utf8) else {
            throw .queryCredentialDateMismatch(credentialDate: scope.date, requestDate: String(date.prefix(8)))
        }
        guard let secret = credentials.secret(for: scope.accessKey) else { throw .invalidAccessKeyId(accessKey: scope.accessKey) }
        let provided = form.values("x-amz-signature").first ?? ""
        let key = signingKeys.key(secret: secret, date: scope.date, region: scope.region, service: scope.service)
        let expected = SigningKey.sign(key, Array(policy.utf8))
        guard SignatureVerifier.matches(expected: expected, provided: provided) else {
            let diagnosis = PostSignatureDiagnosis(credentials: credentials, signingKeys: signingKeys)
                .diagnose(policy: policy, provided: provided, scope: scope, secret: secret)
            throw .signatureDoesNotMatch(SignatureMismatch(accessKey: scope.accessKey, stringToSign: policy,
                                                           signatureProvided: provided, canonicalRequest: nil, diagnosis: diagnosis))
        }
        guard credentials.allows(accessKey: scope.accessKey, bucket: bucket) else {
            throw .bucketAccessDenied(accessKey: scope.accessKey, bucket: bucket)
        }
        return .signed(accessKey: scope.accessKey, policy: policy, sigV2: false)
    }

    private func verifySigV2(_ form: PostForm, policy: String, bucket: String) throws(SigV4Failure) -> Outcome {
        let accessKey = form.values("AWSAccessKeyId").first ?? ""
        guard let secret = credentials.secret(for: accessKey) else { throw .invalidAccessKeyId(accessKey: accessKey) }
        let provided = form.values("signature").first ?? ""
        // SigV2 forms sign the base64 policy with HMAC-SHA1 and send the MAC in base64 (HTML Forms).
        let expected = SigV2.signature(secret: secret, stringToSign: policy)
        guard SigV2.matches(expected: expected, provided: provided) else {
            let others = credentials.keys.filter { $0.accessKey != accessKey }
                .first { SigV2.matches(expected: SigV2.signature(secret: $0.secret, stringToSign: policy), provided: provided) }
            let diagnosis = others.map { "The policy was signed with the secret of access key '\($0.accessKey)', but AWSAccessKeyId names '\(accessKey)'." }
                ?? "The signature is not the base64 HMAC-SHA1 of the policy field under the secret of '\(accessKey)'; most likely the secret is wrong, or the policy changed after signing."
            throw .sigV2SignatureDoesNotMatch(SignatureMismatch(accessKey: accessKey, stringToSign: policy, signatureProvided: provided,
                                                                canonicalRequest: nil, diagnosis: diagnosis))
        }
        guard credentials.allows(accessKey: accessKey, bucket: bucket) else {
            throw .bucketAccessDenied(accessKey: accessKey, bucket: bucket)
        }
        return .signed(accessKey: accessKey, policy: policy, sigV2: true)
    }
}
