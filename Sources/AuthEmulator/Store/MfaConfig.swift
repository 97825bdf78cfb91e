import HearthCore

/// A project's (`mfa`) or tenant's (`mfaConfig`) multi-factor settings, the Admin v2
/// `MultiFactorAuthConfig` message.
struct MfaConfig: Sendable, Equatable {
    /// `DISABLED`, `ENABLED` or `MANDATORY` (`STATE_UNSPECIFIED` counts as disabled).
    var state: String
    /// `PHONE_SMS` when SMS second factors are allowed.
    var enabledProviders: [String]

    /// The allowed values of `state`.
    static let states = ["STATE_UNSPECIFIED", "DISABLED", "ENABLED", "MANDATORY"]
    /// The allowed values of `enabledProviders`.
    static let providers = ["PROVIDER_UNSPECIFIED", "PHONE_SMS"]

    /// What the Firebase Auth emulator gives a project that never configured MFA: SMS second
    /// factors on, so suites written against it enroll without configuring anything first.
    static let emulatorDefault = MfaConfig(state: "ENABLED", enabledProviders: ["PHONE_SMS"])

    /// What a new tenant has: off.
    static let disabled = MfaConfig(state: "DISABLED", enabledProviders: [])

    /// Whether second factors are in force: sign-ins of enrolled accounts need one.
    var isEnabled: Bool { state == "ENABLED" || state == "MANDATORY" }

    /// Whether SMS second factors may be enrolled and used.
    var allowsPhone: Bool { isEnabled && enabledProviders.contains("PHONE_SMS") }

    init(state: String, enabledProviders: [String]) {
        self.state = state
        self.enabledProviders = enabledProviders
    }

    /// Reads a stored (already validated) config object; absent members are the proto defaults.
    init(json: JSON) {
        state = json["state"]?.stringValue ?? "STATE_UNSPECIFIED"
        enabledProviders = json["enabledProviders"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Checks a config object from a request, naming fields as Google's proto JSON parser does
    /// (`field` is the proto path, e.g. `tenant.mfa_config`).
    /// - Throws: 400 INVALID_ARGUMENT for a wrongly typed member or an unknown enum value.
    static func validate(_ body: RequestBody, field: String) throws(AuthError) {
        if let state = try body.string("state"), !states.contains(state) {
            throw .invalidArgument("Invalid value at '\(field).state' (type.googleapis.com/google.cloud.identitytoolkit.admin.v2.MultiFactorAuthConfig.State), \"\(state)\"",
                                   reason: "invalid")
        }
        for (i, p) in (try body.strings("enabledProviders") ?? []).enumerated() where !providers.contains(p) {
            throw .invalidArgument("Invalid value at '\(field).enabled_providers[\(i)]' (type.googleapis.com/google.cloud.identitytoolkit.admin.v2.MultiFactorAuthConfig.Provider), \"\(p)\"",
                                   reason: "invalid")
        }
        _ = try body.objects("providerConfigs")
    }
}
