import Foundation
import HearthCore

/// A project's emulator configuration, stored as the Identity Toolkit v2 `Config` JSON it is read
/// and patched as (`signIn`, `blockingFunctions`, `emailPrivacyConfig`, `mfa`, and whatever else a
/// client patches in).
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

    /// The project's multi-factor settings: as configured (`mfa`), else the Firebase emulator's
    /// (SMS second factors on).
    var mfa: MfaConfig { document["mfa"].map(MfaConfig.init(json:)) ?? .emulatorDefault }

    /// `signIn.phoneNumber.testPhoneNumbers`: numbers whose SMS code is fixed.
    var testPhoneNumbers: [String: String] {
        var out: [String: String] = [:]
        for (phone, code) in document["signIn"]?["phoneNumber"]?["testPhoneNumbers"]?.objectValue ?? [:] { out[phone] = code.stringValue }
        return out
    }

    /// The `/emulator/v1/projects/{p}/config` view.
    var emulatorView: JSON {
        .object(JSONObject([
            ("signIn", .object(JSONObject([("allowDuplicateEmails", .bool(allowDuplicateEmails))]))),
            ("emailPrivacyConfig", .object(JSONObject([("enableImprovedEmailPrivacy", .bool(improvedEmailPrivacy))]))),
        ]))
    }

    /// Applies a v2 `projects.updateConfig` body: without a mask the three known sections are
    /// replaced (defaults for what is absent) and `mfa` is set when present; with one, only the
    /// listed dotted paths are copied.
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
            if let mfa = update["mfa"], !mfa.isNull { next["mfa"] = mfa }
            document = next
            return
        }
        for fields in FieldMask.paths(mask) {
            guard let value = FieldMask.value(at: fields, in: .object(update)) else { continue }
            document = FieldMask.setting(value, at: fields[...], in: document)
        }
    }
}
