import HearthCore

/// One identity linked to an account (`password`, `phone`, `google.com`, …), as Identity Toolkit's
/// `ProviderUserInfo` message carries it.
struct ProviderUserInfo: Sendable, Equatable {
    var providerId: String
    var rawId: String
    var federatedId: String?
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var screenName: String?

    /// The wire form, members in the order production lists them.
    var json: JSON {
        var o = JSONObject([("providerId", .string(providerId))])
        if let federatedId { o["federatedId"] = .string(federatedId) }
        if let email { o["email"] = .string(email) }
        if let displayName { o["displayName"] = .string(displayName) }
        if let photoUrl { o["photoUrl"] = .string(photoUrl) }
        if let phoneNumber { o["phoneNumber"] = .string(phoneNumber) }
        if let screenName { o["screenName"] = .string(screenName) }
        o["rawId"] = .string(rawId)
        return .object(o)
    }

    /// Reads the wire (or stored) form; nil without `providerId` and `rawId`.
    init?(json: JSON) {
        guard let providerId = json["providerId"]?.stringValue, let rawId = json["rawId"]?.stringValue else { return nil }
        self.providerId = providerId
        self.rawId = rawId
        federatedId = json["federatedId"]?.stringValue
        email = json["email"]?.stringValue
        displayName = json["displayName"]?.stringValue
        photoUrl = json["photoUrl"]?.stringValue
        phoneNumber = json["phoneNumber"]?.stringValue
        screenName = json["screenName"]?.stringValue
    }

    init(providerId: String, rawId: String, federatedId: String? = nil, email: String? = nil, displayName: String? = nil,
         photoUrl: String? = nil, phoneNumber: String? = nil, screenName: String? = nil) {
        self.providerId = providerId
        self.rawId = rawId
        self.federatedId = federatedId
        self.email = email
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.screenName = screenName
    }
}
