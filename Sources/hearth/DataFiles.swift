import AuthEmulator
import FirestoreEmulator
import Foundation
import HearthSQLite
import S3Emulator
import StorageEmulator

/// The SQLite files of a data directory, opened and migrated: `hearth.sqlite` (Auth, S3, Storage;
/// 16 KiB pages for S3's 1 MiB body chunks) and `firestore.sqlite` (Firestore alone, 4 KiB pages:
/// a commit rewrites a few pages of small rows, and 16 KiB pages quadrupled its WAL bytes). Each
/// file has its own writer, readers and commit batching; no transaction spans both (none did
/// before: no service's write touches another service's tables).
///
/// A data directory made before Firestore had its own file holds its tables in `hearth.sqlite`;
/// opening it moves them over (`FirestoreFileMove`, crash-safe) before anything else runs.
struct DataFiles {
    static let mainFile = "hearth.sqlite"
    static let firestoreFile = "firestore.sqlite"

    /// Auth's, S3's and Storage's tables.
    let main: Database
    /// Firestore's tables.
    let firestore: Database

    /// Every service but Firestore: the main file's schema.
    static let mainMigrations: [Migration] = AuthService.migrations + S3Service.migrations + StorageService.migrations

    /// Opens the files of `directory` (nil: two private in-memory databases), migrating both.
    init(directory: String?) throws {
        guard let directory else {
            main = try Database(path: nil)
            firestore = try Database(path: nil, layout: FirestoreService.databaseLayout)
            try main.migrate(Self.mainMigrations)
            try firestore.migrate(FirestoreService.migrations)
            return
        }
        let mainPath = (directory as NSString).appendingPathComponent(Self.mainFile)
        let firestorePath = (directory as NSString).appendingPathComponent(Self.firestoreFile)
        main = try Database(path: mainPath)
        if try FirestoreFileMove.isNeeded(in: main) {
            // First bring the old layout's tables to this binary's schema (the order every service's
            // migrations had then), so the copy has the same columns as the new file.
            try main.migrate(AuthService.migrations + FirestoreService.migrations + S3Service.migrations + StorageService.migrations)
            try FirestoreFileMove.run(from: main, to: firestorePath)
        }
        try main.migrate(Self.mainMigrations)
        firestore = try Database(path: firestorePath, layout: FirestoreService.databaseLayout)
        try firestore.migrate(FirestoreService.migrations)
    }

    /// Copies each WAL into its file and truncates it (at shutdown); both are tried.
    func checkpoint() throws {
        var failure: (any Error)?
        for db in [main, firestore] {
            do { try db.checkpoint() } catch { failure = error }
        }
        if let failure { throw failure }
    }
}
