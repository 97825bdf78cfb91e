import HearthCore

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
///   merges the transformed fields' few members and entries into these (`members(of:)`) instead
///   of sorting every field and building every entry again.
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
    }

    init(_ write: Write) {
        parentKey = OrderedEncoding.key(write.path.segments.dropLast())
        var key = parentKey
        OrderedEncoding.appendSegment(write.path.segments.last ?? "", to: &key)
        self.key = key
        fixed = Self.fixed(write)
    }

    private static func fixed(_ write: Write) -> Fixed? {
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
        return Fixed(members: members, entries: IndexEntry.entries(ofSorted: members), transformed: transformed)
    }

    /// `OrderedEncoding.sortedMembers(fields)` and `IndexEntry.entries(ofSorted:)` of them, for
    /// `fields` the document this write left (its outcome), from `fixed` and the transformed
    /// fields' values; nil without `fixed`, or when `fields` is not what `fixed` was made for
    /// (the caller then works them out from `fields` itself).
    func members(of fields: [ExactString: FirestoreValue])
        -> (members: [(key: ExactString, value: FirestoreValue)], entries: [IndexEntry])? {
        guard let fixed, fields.count == fixed.members.count + fixed.transformed.count else { return nil }
        if fixed.transformed.isEmpty { return (fixed.members, fixed.entries) }
        var added: [(key: ExactString, value: FirestoreValue)] = []
        added.reserveCapacity(fixed.transformed.count)
        for name in fixed.transformed {
            guard let value = fields[name] else { return nil }
            added.append((name, value))
        }
        // Both lists sorted, their names disjoint: one merge gives the order a sort would.
        var members: [(key: ExactString, value: FirestoreValue)] = []
        members.reserveCapacity(fields.count)
        var j = 0
        for m in fixed.members {
            while j < added.count && added[j].key < m.key {
                members.append(added[j])
                j += 1
            }
            members.append(m)
        }
        members.append(contentsOf: added[j...])
        return (members, IndexEntry.merged(fixed.entries, IndexEntry.entries(ofSorted: added)))
    }
}
