/// A RestoreObject body (`RestoreRequest`): how many days the restored copy lasts, and the
/// retrieval tier, which Hearth checks and otherwise ignores (every restore completes at once).
struct RestoreRequest: Sendable, Equatable {
    var days: Int?
    var tier: String?
    /// `Type` SELECT: an S3 Select restore (discontinued by AWS; Hearth answers NotImplemented).
    var isSelect = false

    static let tiers: Set<String> = ["Standard", "Bulk", "Expedited"]
    static let elements: Set<String> = [
        "Days", "GlacierJobParameters", "Type", "Tier", "Description", "SelectParameters", "OutputLocation",
    ]

    /// Parses a body; an empty one asks for nothing (the object's class then decides the answer).
    static func parse(_ body: [UInt8]) -> Result<RestoreRequest, S3Error> {
        var r = RestoreRequest()
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return .success(r) }
        guard let root = try? S3XMLParser.parse(body), root.name == "RestoreRequest" else { return .failure(.malformedXML) }
        for child in root.children {
            guard elements.contains(child.name) else { return .failure(.malformedXML) }
        }
        if let text = root.childText("Days") {
            // An xsd:int in S3's schema: a number past 32 bits does not validate.
            guard let days = Int32(text), days >= 1 else { return .failure(.malformedXML) }
            r.days = Int(days)
        }
        if let job = root.child("GlacierJobParameters") {
            guard let tier = job.childText("Tier"), tiers.contains(tier) else { return .failure(.malformedXML) }
            r.tier = tier
        }
        if let tier = root.childText("Tier") {
            guard tiers.contains(tier) else { return .failure(.malformedXML) }
            r.tier = r.tier ?? tier
        }
        if let type = root.childText("Type") {
            guard type == "SELECT" else { return .failure(.malformedXML) }
            r.isSelect = true
        }
        return .success(r)
    }
}
