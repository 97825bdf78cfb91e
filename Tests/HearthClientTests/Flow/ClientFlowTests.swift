import Foundation
import HearthClient
import Testing

/// AuthClient and FirestoreClient against a real `hearth`: the REST shapes they send are the real APIs'.
@Suite(.enabled(if: Flow.available, Flow.skipReason))
struct ClientFlowTests {
    @Test func authClientCoversTheAccountLifecycle() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let auth = try hearth.instance.auth()
        let session = try await auth.signUp(email: "carol@example.com", password: "secret-carol", displayName: "Carol")
        #expect(session.email == "carol@example.com")
        #expect(session.expiresIn == 3600)
        let claims = try #require(session.claims)
        #expect(claims.audience == hearth.instance.projectID)
        #expect(claims.issuer == "https://securetoken.google.com/\(hearth.instance.projectID)")
        #expect(claims.signInProvider == "password")

        let user = try await auth.lookup(idToken: session.idToken)
        #expect(user.uid == session.uid)
        #expect(user.email == "carol@example.com")
        #expect(user.displayName == "Carol")

        let duplicate = try await assertThrowsHearthError { try await auth.signUp(email: "carol@example.com", password: "another1") }
        guard case .api(let dup) = duplicate else { Issue.record("\(duplicate)"); return }
        #expect(dup.authErrorCode == "EMAIL_EXISTS")
        let weak = try await assertThrowsHearthError { try await auth.signUp(email: "dave@example.com", password: "123") }
        guard case .api(let w) = weak else { Issue.record("\(weak)"); return }
        #expect(w.authErrorCode == "WEAK_PASSWORD")
        let wrong = try await assertThrowsHearthError { try await auth.signIn(email: "carol@example.com", password: "nope-nope") }
        guard case .api(let wp) = wrong else { Issue.record("\(wrong)"); return }
        #expect(["INVALID_PASSWORD", "INVALID_LOGIN_CREDENTIALS"].contains(wp.authErrorCode))

        let signedIn = try await auth.signIn(email: "carol@example.com", password: "secret-carol")
        #expect(signedIn.uid == session.uid)
        let renewed = try #require(try await auth.update(idToken: signedIn.idToken, password: "new-secret"))
        #expect(renewed.uid == session.uid)
        _ = try await auth.signIn(email: "carol@example.com", password: "new-secret")

        let anonymous = try await auth.signInAnonymously()
        #expect(anonymous.claims?.signInProvider == "anonymous")
        let custom = try await auth.signIn(customToken: AuthClient.unsignedCustomToken(uid: "device-7"))
        #expect(custom.uid == "device-7")
        #expect(try await auth.refresh(custom).uid == "device-7")

        try await auth.delete(idToken: renewed.idToken)
        try await assertThrowsHearthError { try await auth.signIn(email: "carol@example.com", password: "new-secret") }
    }

    struct Counter: Codable, Equatable {
        @DocumentID var id: String?
        var name: String
        var count: Int
        var tags: [String]
        @ServerTimestamp var updatedAt: Date?
    }

    @Test func firestoreClientReadsWritesQueriesAndBatches() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        // The owner credential bypasses the rules, as the Admin SDK does against the emulator.
        let db = try hearth.instance.firestore(token: .owner)

        var batch = db.batch()
        for (i, name) in ["a", "b", "c"].enumerated() {
            try batch.set(Counter(name: name, count: i, tags: ["t\(i)"]), at: "counters/\(name)")
        }
        let commit = try await db.commit(batch)
        #expect(commit.writeResults.count == 3)
        #expect(commit.writeResults[0].transformResults?.first?.timestampValue != nil)

        let a = try #require(try await db.get(Counter.self, at: "counters/a"))
        #expect(a.id == "a")
        #expect(a.count == 0)
        #expect(a.updatedAt != nil)

        try await db.update(at: "counters/a", fields: ["count": FieldValue.increment(Int64(5)), "tags": FieldValue.arrayUnion(["x"]),
                                                      "meta.note": "hi", "updatedAt": FieldValue.serverTimestamp])
        let a2 = try #require(try await db.document(at: "counters/a"))
        #expect(a2.fields["count"] == .integer(5))
        #expect(a2.fields["tags"] == .array([.string("t0"), .string("x")]))
        #expect(a2.fields["meta"] == .map(["note": .string("hi")]))
        #expect(a2.fields["name"] == .string("a"))

        let big = try await db.query(Counter.self, Query(collection: "counters").whereField("count", .greaterThanOrEqual, 1)
            .order(by: "count", descending: true).limit(2))
        #expect(big.map(\.name) == ["a", "c"])

        try await assertAPIError(httpStatus: 404) { try await db.update(at: "counters/missing", fields: ["count": 1]) }
        try await assertAPIError(httpStatus: 409) { try await db.create(Counter(name: "a", count: 0, tags: []), at: "counters/a") }

        try await db.delete(at: "counters/b")
        #expect(try await db.document(at: "counters/b") == nil)
        let added = try await db.add(Counter(name: "d", count: 9, tags: []), to: "counters")
        #expect(added.documentID.count == 20)
        #expect(try await db.get(Counter.self, at: added.path)?.name == "d")
    }

    /// A `VectorValue` field written through the client is a vector to the server (a `findNearest`
    /// query ranks by it) and decodes back into the same Swift type.
    @Test func vectorFieldsRoundTripThroughTheServer() async throws {
        struct Item: Codable, Equatable { var name: String; var embedding: VectorValue }
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let db = try hearth.instance.firestore(token: .owner)
        try await db.set(Item(name: "near", embedding: VectorValue([1, 0])), at: "items/near")
        try await db.set(Item(name: "far", embedding: VectorValue([9, 9])), at: "items/far")
        #expect(try await db.get(Item.self, at: "items/near") == Item(name: "near", embedding: VectorValue([1, 0])))
        #expect(try await db.document(at: "items/far")?.fields["embedding"] == .vector(VectorValue([9, 9])))
        // The server ranks by the stored vector, which it only does for a vector value.
        let nearest = try await db.query(Item.self, Query(collection: "items")
            .findNearest(vectorField: "embedding", queryVector: VectorValue([0, 0]), limit: 1, distanceMeasure: .euclidean))
        #expect(nearest.map(\.name) == ["near"])
    }

    @Test func theShippedRulesAllowOwnerStatusUpdatesOnly() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let p = try await alice.uploads.presign(contentType: "image/webp", fileExt: "webp")
        var meta = FileMetadata(ownerUid: alice.uid, s3Key: p.key, contentType: "image/webp")
        meta.status = "pending"
        let ref = try await alice.firestore.add(meta, to: "users/\(alice.uid)/files")

        try await alice.uploads.upload(Data("RIFF....WEBP".utf8), to: p)
        try await alice.firestore.update(at: ref.path, fields: ["status": "ready", "size": 12])
        #expect(try await alice.firestore.get(FileMetadata.self, at: ref.path)?.status == "ready")
        try await assertPermissionDenied { try await alice.firestore.update(at: ref.path, fields: ["s3Key": "users/\(alice.uid)/uploads/x.webp"]) }
        try await assertPermissionDenied { try await alice.firestore.update(at: ref.path, fields: ["status": "deleted"]) }
        try await alice.firestore.delete(at: ref.path)
    }
}
