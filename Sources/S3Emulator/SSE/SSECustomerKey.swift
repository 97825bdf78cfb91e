import Foundation
import HearthCrypto

/// An SSE-C key as a request carries it: `…-customer-algorithm: AES256`, `…-customer-key` (the
/// 256-bit key in base64) and `…-customer-key-MD5` (base64 MD5 of the key), which S3 checks.
///
/// Related: "Using server-side encryption with customer-provided keys (SSE-C)". The same three
/// headers with `x-amz-copy-source-server-side-encryption-customer-` name a copy source's key.
struct SSECustomerKey: Sendable, Equatable {
    /// The raw 32-byte key.
    let key: [UInt8]
    /// Its MD5 in base64, what S3 stores and echoes.
    let md5: String

    /// The key the headers under `prefix` give (nil when none of them is present).
    static func fromHeaders(_ header: (String) -> String?, prefix: String) -> Result<SSECustomerKey?, S3Error> {
        let algorithm = header(prefix + "algorithm")
        let keyText = header(prefix + "key")
        let md5Text = header(prefix + "key-MD5") ?? header(prefix + "key-md5")
        if algorithm == nil && keyText == nil && md5Text == nil { return .success(nil) }
        guard let algorithm else {
            return .failure(.invalidArgument(message: "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.",
                                             name: prefix + "algorithm", value: nil))
        }
        guard algorithm == "AES256" else {
            return .failure(.invalidArgument(message: "The encryption algorithm specified is not valid. The valid value is AES256.",
                                             name: prefix + "algorithm", value: algorithm))
        }
        guard let keyText else {
            return .failure(.invalidArgument(message: "Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.",
                                             name: prefix + "key", value: nil))
        }
        guard let key = Data(base64Encoded: keyText).map(Array.init), key.count == 32 else {
            return .failure(.invalidArgument(message: "The secret key was invalid for the specified algorithm.", name: prefix + "key", value: nil))
        }
        let actual = Data(Digest.md5(key)).base64EncodedString()
        guard let md5Text else {
            return .failure(.invalidArgument(message: "Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.",
                                             name: prefix + "key-MD5", value: nil))
        }
        guard md5Text == actual else {
            return .failure(.invalidArgument(message: "The calculated MD5 hash of the key did not match the hash that was provided.",
                                             name: prefix + "key-MD5", value: nil))
        }
        return .success(SSECustomerKey(key: key, md5: actual))
    }

    /// Checks a read of an object stored with `storedMD5` (nil: not SSE-C) against this request's key.
    static func checkRead(stored storedMD5: String?, sent: SSECustomerKey?) -> S3Error? {
        switch (storedMD5, sent) {
        case (nil, nil): return nil
        case (nil, .some):
            return .invalidRequest(message: "The encryption parameters are not applicable to this object.")
        case (.some, nil):
            return .invalidRequest(message: "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
        case (.some(let stored), .some(let key)):
            return stored == key.md5 ? nil : .accessDenied(message: "Access Denied")
        }
    }

    /// The key a read of an object stored with `storedMD5` carries under `prefix`, after
    /// `checkRead` accepted it (nil: the object is not SSE-C and none was sent).
    static func forRead(_ header: (String) -> String?, prefix: String, stored storedMD5: String?) -> Result<SSECustomerKey?, S3Error> {
        fromHeaders(header, prefix: prefix).flatMap { key in
            checkRead(stored: storedMD5, sent: key).map { .failure($0) } ?? .success(key)
        }
    }
}
