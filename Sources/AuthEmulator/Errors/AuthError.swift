import HearthCore
import HearthHTTP

/// Every failure the Auth emulator reports, with the code, HTTP status and message Firebase uses.
///
/// Identity Toolkit errors are 400s whose `message` is the Firebase code, optionally followed by
/// `" : "` and detail (`WEAK_PASSWORD : Password should be at least 6 characters`); clients split
/// on the colon to find the code. Google API infrastructure errors (credentials, unknown paths,
/// malformed JSON) add a `status` such as `PERMISSION_DENIED` or `INVALID_ARGUMENT`.
/// Related: https://cloud.google.com/identity-platform/docs/use-rest-api#handling_errors
enum AuthError: Error, Equatable, Sendable {
    // MARK: Identity Toolkit codes (HTTP 400, no status)
    case emailExists
    case emailNotFound
    case invalidPassword
    case invalidLoginCredentials
    case weakPassword
    case missingPassword
    case missingEmail
    case invalidEmail
    case invalidEmailMismatch
    case missingIdToken
    case invalidIdToken
    case tokenExpired
    case userDisabled
    case userNotFound
    case missingLocalId
    case duplicateLocalId
    case duplicateLocalIdAt(String)
    case unexpectedParameterUserId
    case invalidRefreshToken
    case missingRefreshToken
    case missingGrantType
    case invalidGrantType
    case missingCustomToken
    case invalidCustomToken(String?)
    case missingIdentifier
    case invalidIdentifier
    case missingContinueUri
    case invalidContinueUri
    case credentialMismatch
    case invalidClaims
    case claimsTooLarge
    case forbiddenClaim(String)
    case insufficientPermission
    case insufficientPermissionTargetProject
    case invalidReqType
    case operationNotAllowed
    case missingReqType
    case missingOobCode
    case invalidOobCode
    case missingNewEmail
    case invalidPhoneNumber
    case phoneNumberExists
    case missingPhoneNumber
    case missingSessionInfo
    case missingCode
    case invalidSessionInfo
    case invalidCode
    case missingRequestUri
    case invalidRequestUri
    case invalidCredentialOrProviderId(String)
    case invalidIdpResponse(String)
    case federatedUserIdAlreadyLinked
    case missingUserAccount
    case duplicateEmail(String)
    case duplicateRawId(String, String)
    case localIdListExceedsLimit
    case invalidDuration
    case missingProviderId
    case missingRawId
    case unsupportedFirstFactor
    // Multi-tenancy
    case tenantNotFound
    case tenantIdMismatch
    case invalidTenantId
    case projectDisabled
    case adminOnlyOperation
    case passwordLoginDisabled
    /// A tenant's display name missing where one is required (Admin v2, 400 INVALID_ARGUMENT).
    case missingDisplayName
    /// A display name production refuses (Admin v2, 400 INVALID_ARGUMENT).
    case invalidDisplayName
    case invalidTestingPhoneNumber
    // Multi-factor authentication
    case mfaNotEnabled
    case mfaUnsupportedFirstFactor
    case unverifiedEmail
    case secondFactorExists
    case secondFactorLimitExceeded
    case mfaEnrollmentNotFound
    case missingMfaPendingCredential
    case missingMfaEnrollmentId
    case missingCredential
    case invalidMfaPendingCredential
    case pendingCredentialProjectMismatch
    case invalidMfaPhoneNumber
    case duplicateMfaEnrollmentId
    // OIDC and SAML provider configurations (Admin v2), with the server codes the Admin SDKs map
    case configurationNotFound
    case configurationExists
    case missingConfigId
    /// A provider id without its kind's prefix (`oidc.` / `saml.`).
    case invalidConfigId(String)
    case missingOAuthClientId
    case missingIssuer
    /// A SAML configuration without its `idpConfig`.
    case missingConfig
    /// A SAML configuration without its `spConfig`.
    case missingSamlRelyingPartyConfig
    /// A configuration member missing or malformed (the detail names it).
    case invalidConfig(String)
    /// A per-request validation failure whose exact text the emulator defines (batchCreate rows,
    /// config PATCH).
    case invalidInput(String)

    // MARK: Google API infrastructure errors
    /// Malformed JSON, a field of the wrong type, an over-long body (400 INVALID_ARGUMENT).
    case invalidArgument(String, reason: String)
    /// No API key and no bearer token (403 PERMISSION_DENIED).
    case missingAPIKey
    /// App Check: the debug token is not registered (403 PERMISSION_DENIED).
    case appAttestationFailed
    /// A bearer token that is neither `owner` nor a `ya29.` access token (401 UNAUTHENTICATED).
    case invalidCredentials
    /// An unknown path (404 NOT_FOUND).
    case notFound
    /// A real Identity Toolkit feature Hearth does not emulate (501 NOT_IMPLEMENTED).
    case notImplemented(String)
    /// A bug or a storage failure (500 INTERNAL); logged.
    case internalError(String)

    /// The HTTP status.
    var httpStatus: Int {
        switch self {
        case .invalidArgument: 400
        case .missingAPIKey, .appAttestationFailed: 403
        case .invalidCredentials: 401
        case .notFound: 404
        case .notImplemented: 501
        case .internalError: 500
        default: 400
        }
    }

    /// The Google status name, absent on Identity Toolkit's own 400s.
    var status: String? {
        switch self {
        case .invalidArgument, .missingDisplayName, .invalidDisplayName: "INVALID_ARGUMENT"
        case .missingAPIKey, .appAttestationFailed: "PERMISSION_DENIED"
        case .invalidCredentials: "UNAUTHENTICATED"
        case .notFound: "NOT_FOUND"
        case .notImplemented: "NOT_IMPLEMENTED"
        case .internalError: "INTERNAL"
        default: nil
        }
    }

    /// The `message` field: the Firebase code, with detail after `" : "` where Firebase adds some.
    var message: String {
        switch self {
        case .emailExists: "EMAIL_EXISTS"
        case .emailNotFound: "EMAIL_NOT_FOUND"
        case .invalidPassword: "INVALID_PASSWORD"
        case .invalidLoginCredentials: "INVALID_LOGIN_CREDENTIALS"
        case .weakPassword: "WEAK_PASSWORD : Password should be at least 6 characters"
        case .missingPassword: "MISSING_PASSWORD"
        case .missingEmail: "MISSING_EMAIL"
        case .invalidEmail: "INVALID_EMAIL"
        case .invalidEmailMismatch: "INVALID_EMAIL : The email provided does not match the sign-in email address."
        case .missingIdToken: "MISSING_ID_TOKEN"
        case .invalidIdToken: "INVALID_ID_TOKEN"
        case .tokenExpired: "TOKEN_EXPIRED"
        case .userDisabled: "USER_DISABLED"
        case .userNotFound: "USER_NOT_FOUND"
        case .missingLocalId: "MISSING_LOCAL_ID"
        case .duplicateLocalId: "DUPLICATE_LOCAL_ID"
        case .duplicateLocalIdAt(let id): "DUPLICATE_LOCAL_ID : \(id)"
        case .unexpectedParameterUserId: "UNEXPECTED_PARAMETER : User ID"
        case .invalidRefreshToken: "INVALID_REFRESH_TOKEN"
        case .missingRefreshToken: "MISSING_REFRESH_TOKEN"
        case .missingGrantType: "MISSING_GRANT_TYPE"
        case .invalidGrantType: "INVALID_GRANT_TYPE"
        case .missingCustomToken: "MISSING_CUSTOM_TOKEN"
        case .invalidCustomToken(let detail): detail.map { "INVALID_CUSTOM_TOKEN : \($0)" } ?? "INVALID_CUSTOM_TOKEN"
        case .missingIdentifier: "MISSING_IDENTIFIER"
        case .invalidIdentifier: "INVALID_IDENTIFIER"
        case .missingContinueUri: "MISSING_CONTINUE_URI"
        case .invalidContinueUri: "INVALID_CONTINUE_URI"
        case .credentialMismatch: "CREDENTIAL_MISMATCH"
        case .invalidClaims: "INVALID_CLAIMS"
        case .claimsTooLarge: "CLAIMS_TOO_LARGE"
        case .forbiddenClaim(let name): "FORBIDDEN_CLAIM : \(name)"
        case .insufficientPermission: "INSUFFICIENT_PERMISSION"
        case .insufficientPermissionTargetProject:
            "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."
        case .invalidReqType: "INVALID_REQ_TYPE : Unsupported request parameters."
        case .operationNotAllowed: "OPERATION_NOT_ALLOWED"
        case .missingReqType: "MISSING_REQ_TYPE"
        case .missingOobCode: "MISSING_OOB_CODE"
        case .invalidOobCode: "INVALID_OOB_CODE"
        case .missingNewEmail: "MISSING_NEW_EMAIL"
        case .invalidPhoneNumber: "INVALID_PHONE_NUMBER : Invalid format."
        case .phoneNumberExists: "PHONE_NUMBER_EXISTS"
        case .missingPhoneNumber: "MISSING_PHONE_NUMBER"
        case .missingSessionInfo: "MISSING_SESSION_INFO"
        case .missingCode: "MISSING_CODE"
        case .invalidSessionInfo: "INVALID_SESSION_INFO"
        case .invalidCode: "INVALID_CODE"
        case .missingRequestUri: "MISSING_REQUEST_URI"
        case .invalidRequestUri: "INVALID_REQUEST_URI"
        case .invalidCredentialOrProviderId(let uri): "INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: \(uri)"
        case .invalidIdpResponse(let detail): "INVALID_IDP_RESPONSE : \(detail)"
        case .federatedUserIdAlreadyLinked: "FEDERATED_USER_ID_ALREADY_LINKED"
        case .missingUserAccount: "MISSING_USER_ACCOUNT"
        case .duplicateEmail(let email): "DUPLICATE_EMAIL : \(email)"
        case .duplicateRawId(let provider, let raw): "DUPLICATE_RAW_ID : Provider id(\(provider)), Raw id(\(raw))"
        case .localIdListExceedsLimit: "LOCAL_ID_LIST_EXCEEDS_LIMIT"
        case .invalidDuration: "INVALID_DURATION"
        case .missingProviderId: "MISSING_PROVIDER_ID"
        case .missingRawId: "MISSING_RAW_ID"
        case .unsupportedFirstFactor:
            "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user."
        case .tenantNotFound: "TENANT_NOT_FOUND"
        case .tenantIdMismatch: "TENANT_ID_MISMATCH"
        case .invalidTenantId: "INVALID_TENANT_ID"
        case .projectDisabled: "PROJECT_DISABLED"
        case .adminOnlyOperation: "ADMIN_ONLY_OPERATION"
        case .passwordLoginDisabled: "PASSWORD_LOGIN_DISABLED"
        case .missingDisplayName: "MISSING_DISPLAY_NAME : Missing tenant with valid display_name."
        case .invalidDisplayName:
            "INVALID_DISPLAY_NAME : display_name should start with a letter and only consist of letters, digits and hyphens with 4-20 characters."
        case .invalidTestingPhoneNumber: "INVALID_TESTING_PHONE_NUMBER"
        case .mfaNotEnabled: "OPERATION_NOT_ALLOWED : SMS based MFA not enabled."
        case .mfaUnsupportedFirstFactor: "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor."
        case .unverifiedEmail: "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors."
        case .secondFactorExists: "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account."
        case .secondFactorLimitExceeded: "SECOND_FACTOR_LIMIT_EXCEEDED"
        case .mfaEnrollmentNotFound: "MFA_ENROLLMENT_NOT_FOUND"
        case .missingMfaPendingCredential: "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential."
        case .missingMfaEnrollmentId: "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided."
        case .missingCredential: "MISSING_CREDENTIAL : Please set MFA Pending Credential."
        case .invalidMfaPendingCredential: "INVALID_MFA_PENDING_CREDENTIAL"
        case .pendingCredentialProjectMismatch: "INVALID_PROJECT_ID : Project ID does not match MFA pending credential."
        case .invalidMfaPhoneNumber: "INVALID_MFA_PHONE_NUMBER : Invalid format."
        case .duplicateMfaEnrollmentId: "DUPLICATE_MFA_ENROLLMENT_ID"
        case .configurationNotFound: "CONFIGURATION_NOT_FOUND"
        case .configurationExists: "CONFIGURATION_EXISTS"
        case .missingConfigId: "MISSING_CONFIG_ID"
        case .invalidConfigId(let detail): "INVALID_CONFIG_ID : \(detail)"
        case .missingOAuthClientId: "MISSING_OAUTH_CLIENT_ID"
        case .missingIssuer: "MISSING_ISSUER"
        case .missingConfig: "MISSING_CONFIG"
        case .missingSamlRelyingPartyConfig: "MISSING_SAML_RELYING_PARTY_CONFIG"
        case .invalidConfig(let detail): "INVALID_CONFIG : \(detail)"
        case .invalidInput(let text): text
        case .invalidArgument(let text, _): text
        case .missingAPIKey: "The request is missing a valid API key."
        case .appAttestationFailed: "App attestation failed."
        case .invalidCredentials:
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
        case .notFound: "Not Found"
        case .notImplemented(let what): what
        case .internalError(let what): what
        }
    }

    /// The `errors[]` entries Google puts next to the message.
    var errorItems: [JSON] {
        func item(_ pairs: [(String, String)]) -> JSON { .object(JSONObject(pairs.map { ($0.0, .string($0.1)) })) }
        switch self {
        case .invalidArgument(let text, let reason):
            return [item([("message", text), ("reason", reason), ("domain", "global")])]
        case .missingAPIKey, .appAttestationFailed:
            return [item([("message", message), ("reason", "forbidden"), ("domain", "global")])]
        case .invalidCredentials:
            return [item([("message", "Invalid Credentials"), ("domain", "global"), ("reason", "authError"),
                          ("location", "Authorization"), ("locationType", "header")])]
        case .notFound:
            return [item([("message", message), ("reason", "notFound")])]
        case .notImplemented:
            return [item([("message", message), ("reason", "unimplemented")])]
        case .internalError:
            return [item([("message", message), ("reason", "internal")])]
        default:
            return [item([("message", message), ("reason", "invalid"), ("domain", "global")])]
        }
    }

    /// The `{"error": {...}}` body.
    var body: JSON {
        var error = JSONObject([("code", .int(Int64(httpStatus))), ("message", .string(message)), ("errors", .array(errorItems))])
        if let status { error["status"] = .string(status) }
        return .object(JSONObject([("error", .object(error))]))
    }

    /// The whole HTTP response.
    func response(pretty: Bool = true) -> Response {
        Response(status: httpStatus, contentType: "application/json; charset=utf-8",
                 body: Array(body.serialized(pretty: pretty).utf8))
    }
}
