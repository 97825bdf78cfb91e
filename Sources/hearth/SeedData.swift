import Foundation
import HearthCore

/// Seed data in and out (`hearth start --import DIR`, `--export-on-exit DIR`, `hearth export DIR`):
/// a directory of JSON files, one folder per service, documented in docs/import-export.md.
///
/// ```
/// DIR/hearth-export.json          {"format": "hearth-export", "version": 1, "services": ["firestore"]}
/// DIR/firestore/documents.json    {"databases": [{"name": …, "documents": [REST Document JSON…]}]}
/// ```
/// Pretty-printed with a stable order, so exports diff well in a fixture repository.
enum SeedData {
    static let metadataFile = "hearth-export.json"
    static let format = "hearth-export"
    static let version: Int64 = 1
    /// What marks a directory the Firebase emulators exported.
    static let firebaseMetadataFile = "firebase-export-metadata.json"

    /// A Firebase emulators export: `auth_export/accounts.json` goes to the unit that takes it
    /// (`importFirebaseAuth`). Its Firestore part (managed-export LevelDB files) is not read yet.
    static func importFirebaseExport(_ units: [ServiceUnit], from directory: String) throws -> [(String, Int)] {
        var loaded: [(String, Int)] = []
        let accounts = ((directory as NSString).appendingPathComponent("auth_export") as NSString).appendingPathComponent("accounts.json")
        if let data = FileManager.default.contents(atPath: accounts) {
            guard let unit = units.first(where: { $0.importFirebaseAuth != nil }), let load = unit.importFirebaseAuth else { return loaded }
            do {
                loaded.append((unit.name, try load(try JSON.parse(data))))
            } catch {
                throw Failure(description: "--import \(accounts): \(error)")
            }
        }
        return loaded
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
            guard let exportData = unit.exportData else { continue }
            let folder = (directory as NSString).appendingPathComponent(unit.name)
            do {
                try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let json = try exportData()
                try StartCommand.writeAtomically(json.serialized(pretty: true) + "\n", to: (folder as NSString).appendingPathComponent(unit.exportFile))
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
        if fm.fileExists(atPath: (directory as NSString).appendingPathComponent(firebaseMetadataFile)) {
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
