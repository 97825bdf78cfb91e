import HearthCore

/// One parsed `Write`: an update (set or masked merge), a delete, or transforms alone, with
/// field transforms applied after the update and an optional precondition.
struct Write: Sendable, Equatable {
    enum Operation: Sendable, Equatable {
        /// Replace the fields (`mask` nil) or only the masked paths (absent ones are deleted).
        case update(fields: [ExactString: FirestoreValue], mask: [FieldPath]?)
        case delete
        /// The deprecated `transform` write: transforms only.
        case transform
    }

    var path: ResourcePath
    var operation: Operation
    var transforms: [FieldTransform]
    var precondition: Precondition?
    /// The database the write's document name names when it is not the request's (nil: the
    /// request's); a batch acts on the one database its writes name.
    var database: DatabaseID? = nil

    var isDelete: Bool {
        if case .delete = operation { return true }
        return false
    }
}

/// `currentDocument`.
struct Precondition: Sendable, Equatable {
    var exists: Bool?
    var updateTime: Instant?
}

/// One `FieldTransform`.
struct FieldTransform: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case serverTime
        case increment(FirestoreValue)
        case maximum(FirestoreValue)
        case minimum(FirestoreValue)
        case appendMissingElements([FirestoreValue])
        case removeAllFromArray([FirestoreValue])
    }

    var field: FieldPath
    var kind: Kind
}
