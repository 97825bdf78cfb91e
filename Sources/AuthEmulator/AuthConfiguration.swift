/// How the Auth emulator is set up.
public struct AuthConfiguration: Sendable, Equatable {
    /// How ID tokens are signed.
    public enum TokenSigning: String, Sendable, Equatable, CaseIterable {
        /// `{"alg":"none","typ":"JWT"}` and an empty signature: exactly what the Firebase Auth
        /// emulator issues, and the only form the Node Admin SDK accepts in emulator mode.
        case none
        /// RS256 with a key pair generated once per data directory; the public keys are published
        /// where Google publishes them, so production verification code works against Hearth.
        case rs256
    }

    /// The project that API-key requests (client SDKs) belong to.
    public var projectID: String
    /// The ID-token signing mode.
    public var tokenSigning: TokenSigning
    /// PBKDF2-HMAC-SHA256 iterations for stored passwords.
    ///
    /// Emulated accounts hold test passwords and sign-in throughput is benchmarked, so the default
    /// (`defaultPasswordIterations`, 100: about 80 µs per hash with libcrypto 3) keeps the KDF a
    /// small share of a sign-in while no password is ever stored in clear (the Firebase emulator
    /// stores them verbatim). Existing hashes keep the count they were made with.
    public var passwordIterations: Int
    /// App Check debug tokens accepted by `:exchangeDebugToken`; nil accepts any non-empty token
    /// (as a project that registered every token it is sent would).
    public var appCheckDebugTokens: Set<String>?
    /// Lifetime of App Check tokens in seconds (App Check's default is one hour).
    public var appCheckTokenTTLSeconds: Int

    /// The iteration count used unless configured otherwise.
    public static let defaultPasswordIterations = 100

    public init(projectID: String = "demo-hearth", tokenSigning: TokenSigning = .none,
                passwordIterations: Int = AuthConfiguration.defaultPasswordIterations,
                appCheckDebugTokens: Set<String>? = nil, appCheckTokenTTLSeconds: Int = 3600) {
        self.projectID = projectID
        self.tokenSigning = tokenSigning
        self.passwordIterations = max(1, passwordIterations)
        self.appCheckDebugTokens = appCheckDebugTokens
        self.appCheckTokenTTLSeconds = max(1, appCheckTokenTTLSeconds)
    }
}
