import HearthCore

/// One enrolled second factor (an SMS phone number), as Identity Toolkit's `MfaEnrollment`
/// message carries it in `mfaInfo`.
struct MfaEnrollment: Sendable, Equatable {
    /// The factor's id, unique within its account (`second_factor_identifier` in ID tokens).
    var mfaEnrollmentId: String
    var displayName: String?
    /// The phone number, E.164.
    var phoneInfo: String
    /// Unix microseconds.
    var enrolledAt: Int64

    /// Production's cap on second factors per account.
    static let maximumPerAccount = 5

    /// The stored and admin/user-facing form: the full number in `phoneInfo` and
    /// `unobfuscatedPhoneInfo`.
    var json: JSON {
        var o = JSONObject([("mfaEnrollmentId", .string(mfaEnrollmentId))])
        if let displayName { o["displayName"] = .string(displayName) }
        o["phoneInfo"] = .string(phoneInfo)
        o["enrolledAt"] = .string(Instant(unixMicros: enrolledAt).rfc3339(fractionDigits: 3))
        o["unobfuscatedPhoneInfo"] = .string(phoneInfo)
        return .object(o)
    }

    /// The form a sign-in that needs the second factor answers with: the number masked but for
    /// its last four digits (`+*******1234`), as the hint a client shows.
    var hintJSON: JSON {
        var o = JSONObject([("mfaEnrollmentId", .string(mfaEnrollmentId))])
        if let displayName { o["displayName"] = .string(displayName) }
        o["phoneInfo"] = .string(Self.obfuscate(phoneInfo))
        o["enrolledAt"] = .string(Instant(unixMicros: enrolledAt).rfc3339(fractionDigits: 3))
        return .object(o)
    }

    /// Reads the stored form; nil without an id or a phone number.
    init?(json: JSON) {
        guard let id = json["mfaEnrollmentId"]?.stringValue, !id.isEmpty,
              let phone = json["unobfuscatedPhoneInfo"]?.stringValue ?? json["phoneInfo"]?.stringValue else { return nil }
        mfaEnrollmentId = id
        displayName = json["displayName"]?.stringValue
        phoneInfo = phone
        enrolledAt = json["enrolledAt"]?.stringValue.flatMap { Instant(rfc3339: $0) }?.unixMicros ?? 0
    }

    init(mfaEnrollmentId: String, displayName: String?, phoneInfo: String, enrolledAt: Int64) {
        self.mfaEnrollmentId = mfaEnrollmentId
        self.displayName = displayName
        self.phoneInfo = phoneInfo
        self.enrolledAt = enrolledAt
    }

    /// Every digit but the last four replaced by `*`.
    static func obfuscate(_ phone: String) -> String {
        var digitsSeen = 0
        var out: [Character] = []
        for ch in phone.reversed() {
            if ch.isASCII, ch.isNumber {
                digitsSeen += 1
                out.append(digitsSeen > 4 ? "*" : ch)
            } else {
                out.append(ch)
            }
        }
        return String(out.reversed())
    }
}

/// A second factor a session was completed with (`firebase.sign_in_second_factor` and
/// `firebase.second_factor_identifier`); kept with the refresh token so refreshes keep it.
struct SecondFactor: Sendable, Equatable {
    /// The enrollment id.
    var identifier: String
    /// The factor kind (`phone`).
    var provider: String
}
