import Foundation
import HearthCore

/// Seed data in and out (`hearth start --import DIR`, `--export-on-exit DIR`, `hearth export DIR`):
/// a directory of JSON files, one folder per service, documented in docs/import-export.md.
///
/// ```
/// DIR/hearth-export.json          {"format": "hearth-export", "version": 1, "services": ["auth", "firestore", "s3", "storage"]}
/// DIR/auth/accounts.json          {"projects": [{"projectId": …, "config": …, "tenants": […], "accounts": […]}]}
/// DIR/firestore/documents.json    {"databases": [{"name": …, "documents": [REST Document JSON…]}]}
/// DIR/s3/buckets.json             {"buckets": [{"name": …, "configurations": …, "objects": [{"key": …, "file": …}]}]}
/// DIR/s3/objects/<bucket>/<key>   each object's bytes
/// DIR/storage/buckets.json        Cloud Storage, in the Firebase emulators' storage_export layout
/// DIR/storage/blobs/…, metadata/…  each object's bytes and metadata
/// ```
/// Pretty-printed with a stable order, so exports diff well in a fixture repository.
enum SeedData {
    static let metadataFile = "hearth-export.json"
    static let format = "hearth-export"
    static let version: Int64 = 1
    /// What marks a directory the Firebase emulators exported.
    static let firebaseMetadataFile = "firebase-export-metadata.json"

    /// A Firebase emulators export (or a Cloud Firestore emulator export): each unit reads its
    /// own part (`auth_export/…`, `firestore_export/…`).
    static func importFirebaseExport(_ units: [ServiceUnit], from directory: String) throws -> [(String, Int)] {
        var loaded: [(String, Int)] = []
        for unit in units {
            guard let load = unit.importFirebaseExport else { continue }
            do {
                if let count = try load(directory) { loaded.append((unit.name, count)) }
            } catch {
                throw Failure(description: "--import \(directory) (\(unit.name)): \(error)")
            }
        }
        return loaded
    }

    /// Whether `directory` is an export the Cloud Firestore emulator wrote by itself
    /// (`gcloud emulators firestore`): a `*.overall_export_metadata` file at its top or one
    /// folder down (its `:export` endpoint writes into a fresh `firestore_export_<n>` folder).
    static func isFirestoreEmulatorExport(_ directory: String) -> Bool {
        let fm = FileManager.default
        func holds(_ folder: String) -> Bool {
            ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasSuffix(".overall_export_metadata") }
        }
        if holds(directory) { return true }
        return ((try? fm.contentsOfDirectory(atPath: directory)) ?? []).contains { holds((directory as NSString).appendingPathComponent($0)) }
    }

    /// A failure to read or write an export: one line, exit status 2 at start.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes every unit's data below `directory` (created if missing; its files replaced).
    static func export(_ units: [ServiceUnit], to directory: String) throws {
        let fm = FileManager.default
        var names: [JSON] = []
        for unit in units {
            guard unit.exportData != nil || unit.exportTo != nil else { continue }
            let folder = (directory as NSString).appendingPathComponent(unit.name)
            do {
                try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
                if let exportTo = unit.exportTo {
                    try exportTo(folder)
                } else if let exportData = unit.exportData {
                    let json = try exportData()
                    try StartCommand.writeAtomically(json.serialized(pretty: true) + "\n", to: (folder as NSString).appendingPathComponent(unit.exportFile))
                }
            } catch {
                throw Failure(description: "cannot export \(unit.name) to \(folder): \(error)")
            }
            names.append(.string(unit.name))
        }
        let metadata = JSON.object(["format": .string(format), "version": .int(version), "services": .array(names)])
        do {
            try StartCommand.writeAtomically(metadata.serialized(pretty: true) + "\n", to: (directory as NSString).appendingPathComponent(metadataFile))
        } catch {
            throw Failure(description: "cannot write \(metadataFile) in \(directory): \(error)")
        }
    }

    /// Loads what `directory` holds for each unit; returns `name: count` lines for the log.
    /// - Throws: `Failure` when the directory is not an export or a file does not load.
    static func importData(_ units: [ServiceUnit], from directory: String) throws -> [(String, Int)] {
        let fm = FileManager.default
        let metadataPath = (directory as NSString).appendingPathComponent(metadataFile)
        if fm.fileExists(atPath: (directory as NSString).appendingPathComponent(firebaseMetadataFile))
            || isFirestoreEmulatorExport(directory) {
            return try importFirebaseExport(units, from: directory)
        }
        guard let data = fm.contents(atPath: metadataPath) else {
            throw Failure(description: "--import \(directory): no \(metadataFile) (is it a directory hearth export or the Firebase emulators wrote?)")
        }
        guard let metadata = try? JSON.parse(data), metadata["format"]?.stringValue == format else {
            throw Failure(description: "--import \(directory): \(metadataFile) is not a hearth export")
        }
        guard let v = metadata["version"]?.intValue, v <= version else {
            throw Failure(description: "--import \(directory): export version \(metadata["version"]?.serialized() ?? "?") is newer than this hearth reads (\(version))")
        }
        var loaded: [(String, Int)] = []
        for unit in units {
            if let importFrom = unit.importFrom {
                let folder = (directory as NSString).appendingPathComponent(unit.name)
                guard fm.fileExists(atPath: folder) else { continue }
                do {
                    loaded.append((unit.name, try importFrom(folder)))
                } catch {
                    throw Failure(description: "--import \(folder): \(error)")
                }
                continue
            }
            guard let importData = unit.importData else { continue }
            let path = ((directory as NSString).appendingPathComponent(unit.name) as NSString).appendingPathComponent(unit.exportFile)
            guard let file = fm.contents(atPath: path) else { continue }
            do {
                loaded.append((unit.name, try importData(try JSON.parse(file))))
            } catch {
                throw Failure(description: "--import \(path): \(error)")
            }
        }
        return loaded
    }
}
