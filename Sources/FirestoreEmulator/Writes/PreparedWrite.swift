import HearthCore
import SecurityRules

/// The parts of one write's stored rows that depend neither on the stored state nor on the commit
/// time, worked out before the commit is queued for the single writer (`prepareCommit` runs on the
/// submitting thread: a gRPC Commit's or Write stream's HTTP/2 loop, a REST request's worker).
///
/// Every commit's body runs on one writer thread, one after another, and that thread is what
/// caps commits at 16 streams; what a body can be handed ready-made is work taken off it.
/// - `key`, `parentKey`: the document's key and its parent's (`OrderedEncoding.key`), which the
///   writer needs for the read of the stored document and for its rows.
/// - `fixed`, for an update without a mask (a `set`, every create the SDKs send) whose transforms
///   each name a top-level field: its other fields in `OrderedEncoding.sortedMembers` order and
///   their index entries (`IndexEntry.entries(ofSorted:)`). Such a write's document is its fields
///   with the transformed ones set, whatever was stored before (`WriteApplier.apply`: the update
///   replaces every field, and a transform reads the value the update left), so the writer only
///   merges the transformed fields' few members and entries into these (`document(_:)`) instead
///   of sorting every field and building every entry again; for a caller the rules judge, the
///   same fields as the rules see them (`request.resource.data`, `RulesConversion.map`).
struct PreparedWrite: Sendable {
    let key: [UInt8]
    let parentKey: [UInt8]
    let fixed: Fixed?

    struct Fixed: Sendable {
        /// The fields no transform names, sorted.
        let members: [(key: ExactString, value: FirestoreValue)]
        /// Their index entries, sorted, each once.
        let entries: [IndexEntry]
        /// The transformed fields' names, each once, sorted.
        let transformed: [ExactString]
        /// `members` as the rules see them, in the same order (nil: no rules judge the write).
        let rulesData: [RulesMap.Element]?
    }

    /// What the writer stores and judges of the document a write left, from `document(_:)`.
    struct Document {
        /// Its fields in `OrderedEncoding.sortedMembers` order.
        let members: [(key: ExactString, value: FirestoreValue)]
        /// `IndexEntry.entries(ofSorted: members)`.
        let entries: [IndexEntry]
        /// `RulesConversion.map` of its fields (nil when not prepared for rules).
        let rulesData: RulesMap?
    }

    /// `forRules`: also convert the fields for the rules (a caller they judge).
    init(_ write: Write, forRules: Bool) {
        parentKey = OrderedEncoding.key(write.path.segments.dropLast())
        var key = parentKey
        OrderedEncoding.appendSegment(write.path.segments.last ?? "", to: &key)
        self.key = key
        fixed = Self.fixed(write, forRules: forRules)
    }

    private static func fixed(_ write: Write, forRules: Bool) -> Fixed? {
        guard case .update(let fields, nil) = write.operation else { return nil }
        var transformed: [ExactString] = []
        for t in write.transforms {
            guard t.field.segments.count == 1 else { return nil }
            let name = ExactString(t.field.segments[0])
            if !transformed.contains(name) { transformed.append(name) }
        }
        transformed.sort()
        var members = OrderedEncoding.sortedMembers(fields)
        if !transformed.isEmpty { members.removeAll { transformed.contains($0.key) } }
        // Sorted by bytes as the rules' maps are (`RulesMap`), so the map built from them only checks the order.
        let rulesData = forRules ? members.map { (key: $0.key.string, value: RulesConversion.value($0.value)) } : nil
        return Fixed(members: members, entries: IndexEntry.entries(ofSorted: members), transformed: transformed,
                     rulesData: rulesData)
    }

    /// The document this write left, whose fields are `fields` (the write's outcome), from `fixed`
    /// and the transformed fields' values; nil without `fixed`, or when `fields` is not what
    /// `fixed` was made for (the caller then works everything out from `fields` itself).
    func document(_ fields: [ExactString: FirestoreValue]) -> Document? {
        guard let fixed, fields.count == fixed.members.count + fixed.transformed.count else { return nil }
        if fixed.transformed.isEmpty {
            return Document(members: fixed.members, entries: fixed.entries,
                            rulesData: fixed.rulesData.map { RulesMap(uniqueEntries: $0) })
        }
        var added: [(key: ExactString, value: FirestoreValue)] = []
        added.reserveCapacity(fixed.transformed.count)
        for name in fixed.transformed {
            guard let value = fields[name] else { return nil }
            added.append((name, value))
        }
        // Both lists sorted, their names disjoint: one merge gives the order a sort would.
        var members: [(key: ExactString, value: FirestoreValue)] = []
        members.reserveCapacity(fields.count)
        var rules: [RulesMap.Element] = []
        if fixed.rulesData != nil { rules.reserveCapacity(fields.count) }
        var j = 0
        for (i, m) in fixed.members.enumerated() {
            while j < added.count && added[j].key < m.key {
                members.append(added[j])
                if fixed.rulesData != nil { rules.append((added[j].key.string, RulesConversion.value(added[j].value))) }
                j += 1
            }
            members.append(m)
            if let data = fixed.rulesData { rules.append(data[i]) }
        }
        while j < added.count {
            members.append(added[j])
            if fixed.rulesData != nil { rules.append((added[j].key.string, RulesConversion.value(added[j].value))) }
            j += 1
        }
        return Document(members: members, entries: IndexEntry.merged(fixed.entries, IndexEntry.entries(ofSorted: added)),
                        rulesData: fixed.rulesData == nil ? nil : RulesMap(uniqueEntries: rules))
    }
}
