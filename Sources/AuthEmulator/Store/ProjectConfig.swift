import Foundation
import HearthCore

/// A project's emulator configuration, stored as the Identity Toolkit v2 `Config` JSON it is read
/// and patched as (`signIn`, `blockingFunctions`, `emailPrivacyConfig`, and whatever else a client
/// patches in).
struct ProjectConfig: Sendable, Equatable {
    var document: JSONObject

    /// The emulator's defaults: one account per email, enumeration protection off.
    static let defaults = ProjectConfig(document: JSONObject([
        ("signIn", .object(JSONObject([("allowDuplicateEmails", .bool(false))]))),
        ("blockingFunctions", .object(JSONObject())),
        ("emailPrivacyConfig", .object(JSONObject([("enableImprovedEmailPrivacy", .bool(false))]))),
    ]))

    var allowDuplicateEmails: Bool { document["signIn"]?["allowDuplicateEmails"]?.boolValue ?? false }
    var improvedEmailPrivacy: Bool { document["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"]?.boolValue ?? false }

    /// The `/emulator/v1/projects/{p}/config` view.
    var emulatorView: JSON {
        .object(JSONObject([
            ("signIn", .object(JSONObject([("allowDuplicateEmails", .bool(allowDuplicateEmails))]))),
            ("emailPrivacyConfig", .object(JSONObject([("enableImprovedEmailPrivacy", .bool(improvedEmailPrivacy))]))),
        ]))
    }

    /// Applies a v2 `projects.updateConfig` body: without a mask the three known sections are
    /// replaced (defaults for what is absent); with one, only the listed dotted paths are copied.
    mutating func apply(update: JSONObject, updateMask: String?) {
        guard let mask = updateMask, !mask.isEmpty else {
            var next = document
            let allow = update["signIn"]?["allowDuplicateEmails"]?.boolValue ?? false
            var signIn = next["signIn"]?.objectValue ?? JSONObject()
            signIn["allowDuplicateEmails"] = .bool(allow)
            next["signIn"] = .object(signIn)
            next["blockingFunctions"] = update["blockingFunctions"] ?? .object(JSONObject())
            let privacy = update["emailPrivacyConfig"]?["enableImprovedEmailPrivacy"]?.boolValue ?? false
            next["emailPrivacyConfig"] = .object(JSONObject([("enableImprovedEmailPrivacy", .bool(privacy))]))
            document = next
            return
        }
        for path in mask.split(separator: ",") {
            let fields = path.trimmingCharacters(in: .whitespaces).split(separator: ".").map(String.init)
            guard !fields.isEmpty, let value = Self.value(at: fields, in: .object(update)) else { continue }
            document = Self.setting(value, at: fields[...], in: document)
        }
    }

    private static func value(at fields: [String], in json: JSON) -> JSON? {
        var current = json
        for f in fields {
            guard let next = current[f], !next.isNull else { return nil }
            current = next
        }
        return current
    }

    private static func setting(_ value: JSON, at fields: ArraySlice<String>, in object: JSONObject) -> JSONObject {
        var o = object
        guard let first = fields.first else { return o }
        if fields.count == 1 {
            o[first] = value
        } else {
            let child = o[first]?.objectValue ?? JSONObject()
            o[first] = .object(setting(value, at: fields.dropFirst(), in: child))
        }
        return o
    }
}
