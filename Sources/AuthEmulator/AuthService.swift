import HearthCore
import HearthHTTP
import HearthSQLite

/// The Firebase Auth emulator: Identity Toolkit v1/v2 (with multi-tenancy and SMS second factors),
/// securetoken, the emulator-only endpoints, published signing keys and the App Check debug-token
/// exchange, on one port.
///
/// Client SDKs reach it with `useEmulator("http://127.0.0.1:<port>")`, the Admin SDKs with
/// `FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:<port>`. The rest of Hearth verifies ID tokens through
/// `tokenVerifier` and App Check tokens through `verifyAppCheckToken(_:)`.
public final class AuthService: Sendable {
    /// The schema this service needs; apply with `Database.migrate` before `init`.
    public static let migrations: [Migration] = AuthMigrations.all

    /// The configuration it runs with.
    public let configuration: AuthConfiguration
    private let store: AuthStore
    // Internal, not private: AuthService+Import.swift imports through batchCreate.
    let operations: AuthOperations
    private let verifier: AuthTokenVerifier
    private let service: AuthHTTPService

    /// Creates the service on an already-migrated database.
    ///
    /// In `rs256` mode the ID-token key pair is loaded, or generated and stored on first start.
    /// - Throws: `AuthServiceError` when the stored key cannot be read or a new one cannot be made.
    public init(database: Database, clock: Clock, ids: IDGenerator, logger: Logger,
                configuration: AuthConfiguration = AuthConfiguration()) throws {
        self.configuration = configuration
        store = AuthStore(database: database)
        let keys = SigningKeyRing(store: store, clock: clock, ids: ids)
        verifier = AuthTokenVerifier(signing: configuration.tokenSigning, keys: keys, store: store, clock: clock)
        operations = AuthOperations(store: store, clock: clock, ids: ids, logger: logger, configuration: configuration,
                                    keys: keys, verifier: verifier)
        service = AuthHTTPService(operations: operations, clock: clock, logger: logger)
        if configuration.tokenSigning == .rs256 {
            do throws(AuthError) {
                _ = try keys.activeKey(.idToken)
            } catch {
                throw AuthServiceError.signingKey(error.message)
            }
        }
    }

    /// What the auth port serves.
    public var http: any HTTPService { service }

    /// Verifies ID tokens for Firestore rules and the uploads API, as the signing mode requires.
    public var tokenVerifier: any IDTokenVerifier { verifier }

    /// Whether `token` is an unexpired App Check token from this emulator's debug exchange
    /// (`X-Firebase-AppCheck`), for the uploads API's optional App Check requirement.
    public func verifyAppCheckToken(_ token: String) -> Bool {
        operations.verifyAppCheckToken(token)
    }

    /// The auth emulator's endpoints all live on its own port, as in the Firebase emulator.
    public func registerHubRoutes(_ hub: Router) {}

    /// Deletes every tenant, account, refresh token, out-of-band and SMS code, pending second-factor
    /// sign-in and project configuration. Signing keys are kept, so verifiers that cached them keep
    /// working.
    public func reset() throws {
        do throws(AuthError) {
            try store.write { tx in try tx.wipe() }
        } catch {
            throw AuthServiceError.storage(error.message)
        }
    }
}

/// Why the Auth service could not start or reset.
public enum AuthServiceError: Error, CustomStringConvertible, Sendable {
    case signingKey(String)
    case storage(String)

    public var description: String {
        switch self {
        case .signingKey(let why): "auth: cannot load or create the ID-token signing key: \(why)"
        case .storage(let why): "auth: \(why)"
        }
    }
}
