import HearthCore

/// A stored lifecycle configuration: the GetBucketLifecycleConfiguration document and the
/// `x-amz-transition-default-minimum-object-size` it was put with.
struct StoredLifecycle: Sendable, Equatable {
    var document: String
    var minimumObjectSize: String

    init(document: String, minimumObjectSize: String) {
        self.document = document
        self.minimumObjectSize = minimumObjectSize
    }

    /// Reads `text` back.
    init?(_ text: String) {
        guard let json = try? JSON.parse(text), let document = json["document"]?.stringValue,
              let minimum = json["minimumObjectSize"]?.stringValue else { return nil }
        self.init(document: document, minimumObjectSize: minimum)
    }

    /// The stored form.
    var text: String {
        JSON.object(["document": .string(document), "minimumObjectSize": .string(minimumObjectSize)]).serialized()
    }
}
