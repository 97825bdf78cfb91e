/// HTTP header fields in the order received, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Fields as sent (names keep their case; duplicates are kept separately, in order).
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { self.fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first(where: { HTTPHeaders.namesEqual($0.name, name) })?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPHeaders.namesEqual($0.name, name) }.map(\.value)
    }

    /// Whether a field `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Room for `n` fields without growing (an answer's headers are added one by one: growing
    /// from empty moved them four times).
    public mutating func reserveCapacity(_ n: Int) { fields.reserveCapacity(n) }

    /// Appends a field, keeping any existing ones.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every field `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// Whether two field names are equal ignoring case. Lookups run many times per request, so
    /// ASCII names (all real ones) are compared byte by byte without allocating; anything else
    /// falls back to comparing `lowercased()` forms, the rule this type has always applied.
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in asciiNamesEqual(x, y) } ?? nil
        }
        if let fast, let answer = fast { return answer }
        return a.lowercased() == b.lowercased()
    }

    /// The ASCII comparison, or nil when non-ASCII bytes make it undecidable here.
    private static func asciiNamesEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool? {
        // Leading ASCII bytes that differ decide it whatever follows: lower-casing maps each
        // ASCII character to one ASCII character in place. Most lookups end here.
        let n = Swift.min(x.count, y.count)
        var i = 0
        while i < n {
            let c = x[i], d = y[i]
            if c >= 0x80 || d >= 0x80 { return nil }
            if c != d && asciiLower(c) != asciiLower(d) { return false }
            i += 1
        }
        if x.count == y.count { return true }
        // Lower-casing can change the length only outside ASCII.
        let longer = x.count > y.count ? x : y
        if longer[n...].contains(where: { $0 >= 0x80 }) { return nil }
        return false
    }

    @inline(__always)
    static func asciiLower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    /// An ASCII byte lower-cased (other bytes unchanged).
    @inlinable
    public static func asciiLowercase(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}
