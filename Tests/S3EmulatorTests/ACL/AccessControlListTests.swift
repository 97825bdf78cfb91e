import Foundation
import HearthCrypto
import Testing
@testable import S3Emulator

@Suite struct AccessControlListTests {
    let owner = String(repeating: "a", count: 64)
    let other = String(repeating: "b", count: 64)

    @Test func cannedACLs() throws {
        let publicRead = try #require(AccessControlList.canned("public-read", owner: owner, bucketOwner: owner))
        #expect(publicRead.allows("READ", caller: nil))
        #expect(!publicRead.allows("WRITE", caller: nil))
        #expect(publicRead.allows("WRITE_ACP", caller: owner))
        #expect(publicRead.isPublic)
        let authRead = try #require(AccessControlList.canned("authenticated-read", owner: owner, bucketOwner: owner))
        #expect(!authRead.allows("READ", caller: nil))
        #expect(authRead.allows("READ", caller: other))
        let full = try #require(AccessControlList.canned("bucket-owner-full-control", owner: other, bucketOwner: owner))
        #expect(full.allows("FULL_CONTROL", caller: owner))
        #expect(AccessControlList.canned("private", owner: owner, bucketOwner: owner)?.isOwnerFullControlOnly(owner) == true)
        #expect(AccessControlList.canned("nonsense", owner: owner, bucketOwner: owner) == nil)
    }

    @Test func grantHeaders() throws {
        let headers = ["x-amz-grant-read": #"id="\#(other)", uri="http://acs.amazonaws.com/groups/global/AllUsers""#,
                       "x-amz-grant-write-acp": #"emailAddress="x@example.com""#]
        let acl = try #require(try AccessControlList.fromHeaders({ headers[$0] }, owner: owner, bucketOwner: owner).get())
        #expect(acl.grants.count == 3)
        #expect(acl.allows("READ", caller: other))
        #expect(acl.allows("READ", caller: nil))
        let both = ["x-amz-acl": "private", "x-amz-grant-read": #"id="\#(other)""#]
        #expect(throws: S3Error.self) { try AccessControlList.fromHeaders({ both[$0] }, owner: owner, bucketOwner: owner).get() }
        #expect(try AccessControlList.fromHeaders({ _ in nil }, owner: owner, bucketOwner: owner).get() == nil)
    }

    @Test func documentRoundTrip() throws {
        let acl = AccessControlList(grants: [.init(grantee: .user(canonicalID: owner), permission: "FULL_CONTROL"),
                                             .init(grantee: .group(AccessControlList.allUsers), permission: "READ")])
        let accounts = S3Accounts([.init(accessKey: "k", secretKey: "s", canonicalID: owner, displayName: "me")])
        var x = XMLWriter()
        acl.write(&x, owner: try #require(accounts.account(accessKey: "k")), accounts: accounts)
        let parsed = try AccessControlList.parse(x.bytes).get()
        #expect(parsed.owner == owner)
        #expect(parsed.acl == acl)
        #expect(AccessControlList(serialized: acl.serialized) == acl)
        #expect(throws: S3Error.self) { try AccessControlList.parse(Array("<AccessControlPolicy/>".utf8)).get() }
    }

    @Test func accountsFromCredentials() {
        let accounts = S3Accounts([.init(accessKey: "a", secretKey: "s"), .init(accessKey: "b", secretKey: "s"),
                                   .init(accessKey: "limited", secretKey: "s", allowedBuckets: ["x"])])
        #expect(accounts.primary.accountID == "000000000000")
        #expect(accounts.account(accessKey: "b")?.key == "b")
        #expect(accounts.account(accessKey: "b")?.accountID.count == 12)
        // A key limited to some buckets acts as a user of the first key's account.
        #expect(accounts.account(accessKey: "limited")?.key == "a")
        #expect(accounts.account(accessKey: "nobody") == nil)
    }

    @Test func sseCustomerKeyHeaders() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let md5 = Data(Digest.md5(key)).base64EncodedString()
        let prefix = "x-amz-server-side-encryption-customer-"
        let good = [prefix + "algorithm": "AES256", prefix + "key": Data(key).base64EncodedString(), prefix + "key-MD5": md5]
        #expect(try SSECustomerKey.fromHeaders({ good[$0] }, prefix: prefix).get()?.md5 == md5)
        var badMD5 = good
        badMD5[prefix + "key-MD5"] = Data(Digest.md5([1])).base64EncodedString()
        #expect(throws: S3Error.self) { try SSECustomerKey.fromHeaders({ badMD5[$0] }, prefix: prefix).get() }
        var shortKey = good
        shortKey[prefix + "key"] = Data([1, 2, 3]).base64EncodedString()
        #expect(throws: S3Error.self) { try SSECustomerKey.fromHeaders({ shortKey[$0] }, prefix: prefix).get() }
        #expect(SSECustomerKey.checkRead(stored: md5, sent: nil)?.code == "InvalidRequest")
        #expect(SSECustomerKey.checkRead(stored: "other", sent: SSECustomerKey(key: key, md5: md5))?.code == "AccessDenied")
        #expect(SSECustomerKey.checkRead(stored: nil, sent: nil) == nil)
    }
}
