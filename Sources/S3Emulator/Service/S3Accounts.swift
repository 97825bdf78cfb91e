import HearthCore
import HearthCrypto

/// The AWS accounts behind the configured access keys.
///
/// Every key without a bucket allowlist is an account of its own, as two AWS accounts are: its
/// buckets are its own and other accounts reach them only through a bucket policy or an ACL. A key
/// with an allowlist acts as a user of the first key's account (what such a key models: a limited
/// IAM user of the same team). Storage names an owner by its account's key (`Account.key`).
struct S3Accounts: Sendable {
    /// One account.
    struct Account: Sendable, Equatable {
        /// The access key that stands for the account in storage (bucket, object and upload owners).
        let key: String
        /// The canonical user id (`Owner/ID`, ACL grantees).
        let canonicalID: String
        /// `Owner/DisplayName`.
        let displayName: String
        /// The 12-digit account id (`arn:aws:iam::<id>:root`).
        let accountID: String
    }

    /// The first key's account (owner of the start-up buckets).
    let primary: Account
    private let byAccessKey: [String: Account]
    private let byCanonicalID: [String: Account]

    init(_ credentials: [S3Configuration.Credential]) {
        let first = credentials.first ?? S3Configuration.Credential(accessKey: "test", secretKey: "test")
        func account(_ c: S3Configuration.Credential, primary: Bool) -> Account {
            Account(key: c.accessKey, canonicalID: c.canonicalID ?? S3Accounts.derivedCanonicalID(c.accessKey),
                    displayName: c.displayName ?? c.accessKey,
                    accountID: c.accountID ?? (primary ? "000000000000" : S3Accounts.derivedAccountID(c.accessKey)))
        }
        let primary = account(first, primary: true)
        var byKey: [String: Account] = [first.accessKey: primary]
        var byID: [String: Account] = [primary.canonicalID: primary]
        for c in credentials.dropFirst() where byKey[c.accessKey] == nil {
            let a = c.allowedBuckets == nil ? account(c, primary: false) : primary
            byKey[c.accessKey] = a
            byID[a.canonicalID] = a
        }
        self.primary = primary
        byAccessKey = byKey
        byCanonicalID = byID
    }

    /// The account an access key acts for (nil: not a configured key).
    func account(accessKey: String) -> Account? { byAccessKey[accessKey] }

    /// The account a stored owner names; an owner no longer configured keeps a derived identity.
    func owner(_ storedKey: String) -> Account {
        byAccessKey[storedKey] ?? Account(key: storedKey, canonicalID: S3Accounts.derivedCanonicalID(storedKey),
                                          displayName: storedKey, accountID: S3Accounts.derivedAccountID(storedKey))
    }

    /// The account with this canonical user id.
    func account(canonicalID: String) -> Account? { byCanonicalID[canonicalID] }

    /// A 64-hex canonical id, stable for the key (what Hearth always showed as the owner id).
    static func derivedCanonicalID(_ accessKey: String) -> String {
        Hex.encode(Digest.sha256(Array("hearth-owner:\(accessKey)".utf8)))
    }

    /// Twelve digits, stable for the key.
    static func derivedAccountID(_ accessKey: String) -> String {
        let digest = Digest.sha256(Array("hearth-account:\(accessKey)".utf8))
        return String(digest.prefix(12).map { Character(String($0 % 10)) })
    }
}
