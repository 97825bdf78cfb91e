/// The object keys the API mints, `users/<uid>/uploads/<uuid>.<ext>`, and the checks on keys clients send back.
///
/// The same shape is what the shipped Firestore rules require of a file document's `s3Key`, so a key
/// this type accepts is one the rules accept too.
enum UploadKey {
    /// Longest `fileExt` accepted.
    static let maxExtensionLength = 16
    /// S3's key limit in UTF-8 bytes.
    static let maxKeyBytes = 1024

    /// The key for a new upload.
    static func make(uid: String, uuid: String, fileExt: String) -> String {
        "users/\(uid)/uploads/\(uuid).\(fileExt)"
    }

    /// The prefix every key of `uid` starts with.
    static func ownerPrefix(uid: String) -> String { "users/\(uid)/" }

    /// Checks a `fileExt`: 1…16 ASCII letters or digits (no dots, slashes, spaces or escapes), so the
    /// key needs no percent-encoding and matches the shipped rules' `[A-Za-z0-9]{1,16}`.
    static func validateExtension(_ ext: String) throws(UploadsError) {
        if ext.isEmpty { throw .invalidFileExt(ext, reason: "must not be empty") }
        if ext.contains(".") { throw .invalidFileExt(ext, reason: "give the extension without dots (\"jpg\", not \".jpg\")") }
        if ext.contains("/") || ext.contains("\\") { throw .invalidFileExt(ext, reason: "slashes are not allowed") }
        if ext.utf8.count > maxExtensionLength {
            throw .invalidFileExt(ext, reason: "longer than \(maxExtensionLength) characters")
        }
        for b in ext.utf8 where !isExtensionByte(b) {
            throw .invalidFileExt(ext, reason: "only ASCII letters and digits are allowed")
        }
    }

    private static func isExtensionByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    /// Checks that `key` belongs to `uid` (403 otherwise) and is at most S3's key length.
    static func checkOwnership(_ key: String, uid: String, field: String) throws(UploadsError) {
        if key.utf8.count > maxKeyBytes { throw .invalidKey(field: field, key: key, reason: "longer than \(maxKeyBytes) bytes") }
        // Bytes, as S3 names keys: `String.hasPrefix` compares characters under canonical
        // equivalence, so `users/\u{212A}im/…` (KELVIN SIGN) was the key of uid `Kim`.
        guard key.utf8.starts(with: ownerPrefix(uid: uid).utf8) else { throw .notOwner(field: field, key: key, uid: uid) }
    }

    /// Checks that an owned key has the minted shape `users/<uid>/uploads/<uuid>.<ext>`.
    static func checkMintedShape(_ key: String, uid: String, field: String) throws(UploadsError) {
        // Dropped by bytes, as `checkOwnership` matched them: by characters, a combining mark
        // after the prefix's `/` joined it and was dropped with it.
        let rest = Substring(key.utf8.dropFirst(ownerPrefix(uid: uid).utf8.count))
        let shape = "must look like users/\(uid)/uploads/<uuid>.<ext>, as /v1/uploads/presign returns it"
        guard rest.hasPrefix("uploads/") else { throw .invalidKey(field: field, key: key, reason: shape) }
        let name = rest.dropFirst("uploads/".count)
        guard let dot = name.firstIndex(of: "."), isUUID(name[..<dot]) else {
            throw .invalidKey(field: field, key: key, reason: shape)
        }
        let ext = String(name[name.index(after: dot)...])
        guard !ext.isEmpty, ext.utf8.count <= maxExtensionLength, ext.utf8.allSatisfy(isExtensionByte) else {
            throw .invalidKey(field: field, key: key, reason: shape)
        }
    }

    /// Whether `s` is a lower-case 8-4-4-4-12 hex UUID.
    static func isUUID(_ s: Substring) -> Bool {
        let bytes = Array(s.utf8)
        guard bytes.count == 36 else { return false }
        for (i, b) in bytes.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard b == UInt8(ascii: "-") else { return false }
            } else {
                guard (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) else { return false }
            }
        }
        return true
    }

    /// Checks a Firestore document id from the path (`{fileId}`), as Firestore constrains them.
    static func validateFileID(_ id: String) throws(UploadsError) {
        if id.isEmpty { throw .invalidFileID(id, reason: "must not be empty") }
        if id.utf8.count > 1500 { throw .invalidFileID(String(id.prefix(40)) + "…", reason: "longer than 1500 bytes") }
        // Searched as bytes: `"a/\u{301}b".contains("/")` is false (the slash and the combining
        // mark are one character), and the slash would split the document path.
        if id.utf8.contains(UInt8(ascii: "/")) { throw .invalidFileID(id, reason: "must not contain '/'") }
        if id == "." || id == ".." { throw .invalidFileID(id, reason: "'.' and '..' are not document ids") }
        if id.utf8.count >= 4 && id.hasPrefix("__") && id.hasSuffix("__") {
            throw .invalidFileID(id, reason: "ids matching __.*__ are reserved by Firestore")
        }
    }
}
