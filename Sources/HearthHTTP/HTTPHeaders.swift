/// HTTP header fields in the order received, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Fields as sent (names keep their case; duplicates are kept separately, in order).
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { self.fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first(where: { $0.name.lowercased() == lower })?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    /// Whether a field `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field, keeping any existing ones.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every field `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field `name`.
    public mutating func remove(_ name: String) {
        let lower = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lower }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}
