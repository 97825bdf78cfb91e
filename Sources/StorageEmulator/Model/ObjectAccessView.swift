/// What an object resource needs from its bucket to show its access control (`projection=full`).
struct ObjectAccessView: Sendable {
    /// The owner entity of objects (the JSON API's caller: Hearth's service account).
    var owner: String
    var uniform: Bool
    var defaultObjectACL: [AccessControlEntry]
    /// The bucket's stored default object ACL does not decode (`defaultObjectACL` is GCS's default meanwhile).
    var defaultObjectACLUnreadable: Bool

    init(bucket: StoredBucket, owner: String) {
        self.owner = owner
        uniform = bucket.uniformAccess
        defaultObjectACL = bucket.defaultObjectACL
        defaultObjectACLUnreadable = bucket.unreadable[.defaultObjectAcl] != nil
    }
}
