import Foundation
import HearthCore
import HearthProtobuf

/// Imports what the Cloud Firestore emulator exports (`gcloud emulators firestore start
/// --export-on-exit`, its `:export` endpoint, or `firebase emulators:export`'s `firestore_export`
/// folder): the managed-export layout.
///
/// ```
/// <name>.overall_export_metadata                          LevelDB log: which namespace/kind exports exist
/// all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata   protobuf: their output files
/// all_namespaces/all_kinds/output-0 …                     LevelDB logs: one EntityProto per document
/// ```
extension FirestoreService {
    /// Why an emulator export does not load.
    public struct EmulatorExportError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Loads the Firestore part of a Firebase emulators export directory (the folder its
    /// `firebase-export-metadata.json` names, default `firestore_export`), or of a directory the
    /// Cloud Firestore emulator exported into, into the default project.
    /// - Returns: how many documents were written; nil when there is no Firestore export.
    public func importEmulatorExport(_ directory: String) throws -> Int? {
        guard let metadataPath = Self.overallExportMetadata(in: directory) else { return nil }
        let documents = try Self.emulatorExportDocuments(metadataPath: metadataPath, project: configuration.projectID)
        return try importDocuments(.object(JSONObject([("databases", .array([.object(JSONObject([("documents", .array(documents))]))]))])))
    }

    /// Where the `.overall_export_metadata` file is: in the folder a Firebase export's metadata
    /// names, in `directory` itself, or one folder down (the emulator's `:export` writes into a
    /// fresh `firestore_export_<n>` folder).
    static func overallExportMetadata(in directory: String) -> String? {
        let fm = FileManager.default
        var folders = [directory]
        let firebase = (directory as NSString).appendingPathComponent("firebase-export-metadata.json")
        if let data = fm.contents(atPath: firebase), let meta = try? JSON.parse(data) {
            guard let fs = meta["firestore"] else { return nil }
            if let file = fs["metadata_file"]?.stringValue {
                let path = (directory as NSString).appendingPathComponent(file)
                if fm.fileExists(atPath: path) { return path }
            }
            folders = [(directory as NSString).appendingPathComponent(fs["path"]?.stringValue ?? "firestore_export")]
        }
        for folder in folders {
            let names = ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            if let file = names.first(where: { $0.hasSuffix(".overall_export_metadata") }) {
                return (folder as NSString).appendingPathComponent(file)
            }
            for sub in names {
                let inner = (folder as NSString).appendingPathComponent(sub)
                let files = ((try? fm.contentsOfDirectory(atPath: inner)) ?? []).sorted()
                if let file = files.first(where: { $0.hasSuffix(".overall_export_metadata") }) {
                    return (inner as NSString).appendingPathComponent(file)
                }
            }
        }
        return nil
    }

    /// Every document of the export whose overall metadata is at `metadataPath`, as REST
    /// `Document` JSON in `project`.
    static func emulatorExportDocuments(metadataPath: String, project: String) throws -> [JSON] {
        let root = (metadataPath as NSString).deletingLastPathComponent
        func read(_ path: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else { throw EmulatorExportError(description: "cannot read \(path)") }
            return [UInt8](data)
        }
        func log(_ path: String) throws -> [[UInt8]] {
            do { return try LevelDBLogReader.records(try read(path)) } catch let e as LevelDBLogReader.Failure {
                throw EmulatorExportError(description: "\(path): \(e)")
            }
        }
        // The overall metadata lists, per namespace/kind selection, the relative path of its
        // `.export_metadata` (field 1 → field 2); its first record is a format version.
        var kindFiles: [String] = []
        for record in try log(metadataPath) {
            var r = ProtoReader(record)
            do {
                while let (n, t) = try r.nextTag() {
                    if n == 1, t == 2 {
                        var entry = try r.readMessage()
                        while let (m, u) = try entry.nextTag() {
                            if m == 2, u == 2 { kindFiles.append(try entry.readString()) } else { try entry.skipField(number: m, wireType: u) }
                        }
                    } else {
                        try r.skipField(number: n, wireType: t)
                    }
                }
            } catch {
                continue  // Not a listing record (the version byte).
            }
        }
        guard !kindFiles.isEmpty else { throw EmulatorExportError(description: "\(metadataPath) lists no exported kinds") }
        let decoder = EntityProtoDecoder(targetProject: project)
        var documents: [JSON] = []
        for kindFile in kindFiles {
            guard !kindFile.split(separator: "/").contains("..") else { throw EmulatorExportError(description: "\(kindFile) leaves the export") }
            let kindPath = (root as NSString).appendingPathComponent(kindFile)
            let folder = (kindPath as NSString).deletingLastPathComponent
            // `.export_metadata` (plain protobuf): field 2 per output file, its name in field 2.
            var outputs: [String] = []
            do {
                var r = ProtoReader(try read(kindPath))
                while let (n, t) = try r.nextTag() {
                    if n == 2, t == 2 {
                        var file = try r.readMessage()
                        while let (m, u) = try file.nextTag() {
                            if m == 2, u == 2 { outputs.append(try file.readString()) } else { try file.skipField(number: m, wireType: u) }
                        }
                    } else {
                        try r.skipField(number: n, wireType: t)
                    }
                }
            } catch let e as ProtoDecodingError {
                throw EmulatorExportError(description: "\(kindPath): \(e)")
            }
            for output in outputs {
                guard !output.contains("/") else { throw EmulatorExportError(description: "\(output) leaves the export") }
                let path = (folder as NSString).appendingPathComponent(output)
                for (i, record) in try log(path).enumerated() {
                    do {
                        let (name, fields) = try decoder.document(record)
                        documents.append(.object(JSONObject([("name", .string(name)), ("fields", fields)])))
                    } catch {
                        throw EmulatorExportError(description: "\(path) record \(i): \(error)")
                    }
                }
            }
        }
        return documents
    }
}
