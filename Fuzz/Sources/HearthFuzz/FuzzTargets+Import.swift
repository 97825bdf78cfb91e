import Foundation
import HearthCore
import HearthSQLite
@testable import AuthEmulator
@testable import FirestoreEmulator

/// Seed data a user hands `hearth start --import`: the first input byte picks the form, the rest is
/// the file.
///
/// 0. **The Cloud Firestore emulator's export** (`output-N`): the rest is read as a LevelDB log, as
///    found on disk; then as EntityProto records (each after a varint length) that the target frames
///    into a log with the right checksums, so the records, not the checksums, are what varies. Every
///    record that decodes becomes a document, and the documents are imported.
/// 1. **Hearth's Firestore export** (`firestore/documents.json`), imported.
/// 2. **Hearth's Auth export** (`auth/accounts.json`: configurations, tenants, provider
///    configurations, accounts), imported.
/// 3. **The Firebase Auth emulator's export** (`auth_export/accounts.json`, taken through the
///    `batchCreate` rules, and `config.json`), imported.
///
/// Invariants: a log the target frames reads back as exactly its records. Whatever imports into a
/// fresh in-memory service exports again, that export imports into a second fresh service, and the
/// second export is the first (a round trip changes nothing, as docs/import-export.md promises) —
/// and each imported Firestore document is stored with the values it was given (an import never
/// changes data silently).
extension FuzzTargets {
    static func importExport(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let mode = bytes.first else { return }
        let payload = Array(bytes.dropFirst())
        switch mode % 4 {
        case 0: try ImportProbe.firestoreEmulatorExport(payload)
        case 1:
            guard let json = try? JSON.parse(payload) else { return }
            try ImportProbe.firestoreImport(json)
        case 2:
            guard let json = try? JSON.parse(payload), let service = ImportProbe.auth() else { return }
            guard (try? service.importAccounts(json)) != nil else { return }
            try ImportProbe.authRoundTrip(service, "an Auth export")
        default:
            guard let json = try? JSON.parse(payload), let service = ImportProbe.auth() else { return }
            let accounts = try? service.importEmulatorAccounts(json, projectID: ImportProbe.project, now: ImportProbe.now)
            let config: Void? = try? service.importEmulatorConfig(json, projectID: ImportProbe.project)
            guard accounts != nil || config != nil else { return }
            try ImportProbe.authRoundTrip(service, "an Auth emulator export")
        }
    }
}

/// The fresh services and the round trips of the `import` target.
enum ImportProbe {
    static let project = "demo"
    static let now = Instant(unixSeconds: 1_767_225_600)

    /// At most this many records or documents an input: imports of more say nothing new.
    static let most = 24

    static func firestoreEmulatorExport(_ payload: [UInt8]) throws(FuzzFailure) {
        _ = try? LevelDBLogReader.records(payload)
        let records = split(payload)
        let framed = LevelDBLogWriter.log(records)
        guard let read = try? LevelDBLogReader.records(framed), read == records else {
            throw FuzzFailure("import: a log of \(records.count) records (\(records.map(\.count)) bytes) does not read back as them")
        }
        let decoder = EntityProtoDecoder(targetProject: project)
        var documents: [JSON] = []
        for record in records {
            guard let (name, fields) = try? decoder.document(record) else { continue }
            documents.append(.object(JSONObject([("name", .string(name)), ("fields", fields)])))
        }
        guard !documents.isEmpty else { return }
        try firestoreImport(.object(["databases": .array([.object(["documents": .array(documents)])])]))
    }

    /// Imports `export` into a fresh Firestore; if it takes it, checks the stored values and the round trip.
    static func firestoreImport(_ export: JSON) throws(FuzzFailure) {
        let documents = (export["databases"]?.arrayValue ?? []).flatMap { $0["documents"]?.arrayValue ?? [] }
        guard documents.count <= most, let first = firestore() else { return }
        guard (try? first.importDocuments(export)) != nil else { return }
        let exported: JSON
        do { exported = try first.exportDocuments() } catch { throw FuzzFailure("import: a Firestore import does not export: \(error)") }
        // The values each name was given last are the values stored (names as the store spells them).
        var given: [String: JSON] = [:]
        for d in documents {
            guard let name = d["name"]?.stringValue,
                  let fields = try? ValueJSON.decodeFields(d["fields"] ?? .object([:]), path: "fields") else { continue }
            given[name] = ValueJSON.encodeFields(fields)
        }
        for db in exported["databases"]?.arrayValue ?? [] {
            for d in db["documents"]?.arrayValue ?? [] {
                guard let name = d["name"]?.stringValue, let wanted = given[name] else { continue }
                let stored = d["fields"] ?? .object([:])
                guard stored == wanted else {
                    throw FuzzFailure("import: \(name) was given \(wanted) and stored \(stored)")
                }
            }
        }
        guard let second = firestore() else { return }
        do { _ = try second.importDocuments(exported) } catch {
            throw FuzzFailure("import: the export of an imported Firestore does not import again: \(error); export \(exported)")
        }
        guard let again = try? second.exportDocuments(), withoutTimes(again) == withoutTimes(exported) else {
            throw FuzzFailure("import: a Firestore export imported again exports otherwise: \(exported)")
        }
        FuzzChecks.count("import")
    }

    static func authRoundTrip(_ service: AuthService, _ what: String) throws(FuzzFailure) {
        let exported: JSON
        do { exported = try service.exportAccounts() } catch { throw FuzzFailure("import: \(what) imported but does not export: \(error)") }
        guard let second = auth() else { return }
        do { _ = try second.importAccounts(exported) } catch {
            throw FuzzFailure("import: the export of \(what) does not import again: \(error); export \(exported)")
        }
        guard let again = try? second.exportAccounts(), again == exported else {
            throw FuzzFailure("import: the export of \(what) imported again exports otherwise: \(exported)")
        }
        FuzzChecks.count("import")
    }

    /// An export's documents without their create and update times: those are the import's commit
    /// times, which depend on how the writes were batched.
    static func withoutTimes(_ export: JSON) -> JSON {
        .array((export["databases"]?.arrayValue ?? []).map { db in
            .array((db["documents"]?.arrayValue ?? []).map { d in .array([d["name"] ?? .null, d["fields"] ?? .null]) })
        })
    }

    /// Records each after a varint length; the last takes what is left.
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i < bytes.count, out.count < most {
            var length = 0, shift = 0
            while i < bytes.count, shift < 28 {
                let b = bytes[i]
                i += 1
                length |= Int(b & 0x7F) << shift
                shift += 7
                if b < 0x80 { break }
            }
            let end = min(i + length, bytes.count)
            out.append(Array(bytes[i..<end]))
            i = end
        }
        return out
    }

    struct NoTokens: IDTokenVerifier {
        func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
            throw .malformed("no tokens in the fuzz target")
        }
    }

    static func firestore() -> FirestoreService? {
        guard let database = try? Database(path: nil), (try? database.migrate(FirestoreService.migrations)) != nil else { return nil }
        return FirestoreService(database: database, clock: Clock(frozenAt: now), ids: IDGenerator(seed: 7), logger: Logger(quiet: true),
                                configuration: FirestoreConfiguration(projectID: project), tokenVerifier: NoTokens())
    }

    static func auth() -> AuthService? {
        guard let database = try? Database(path: nil), (try? database.migrate(AuthService.migrations)) != nil else { return nil }
        return try? AuthService(database: database, clock: Clock(frozenAt: now), ids: IDGenerator(seed: 7), logger: Logger(quiet: true),
                                configuration: AuthConfiguration(projectID: project, passwordIterations: 2))
    }
}
