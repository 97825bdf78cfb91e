import HearthCore

/// Several writes to one document in one commit. Firestore applies them in order, but some orders
/// cannot be collapsed into one mutation of the document, and the official emulator refuses the
/// whole request for them before it reads anything (INVALID_ARGUMENT, the document's state aside):
/// a write that needs the document missing (`exists: false`) after any write but a delete, one that
/// needs it present (`exists: true`, an update with an update time) after a delete, and an update
/// time that differs from the first write's precondition (docs/firestore.md, *Writes*).
enum WriteCollapse {
    /// The emulator's names for the kinds of mutation, as its messages give them.
    private enum Verb: String {
        case insert, update, upsert, delete
    }

    private enum Needs {
        case exists, missing, nothing
    }

    private static func classify(_ w: Write) -> (Verb, Needs) {
        let p = w.precondition
        if w.isDelete {
            switch p?.exists {
            case true?: return (.delete, .exists)
            case false?: return (.delete, .missing)
            case nil: return (.delete, .nothing)
            }
        }
        switch p?.exists {
        case false?: return (.insert, .missing)
        case true?: return (.update, .exists)
        case nil: return p?.updateTime == nil ? (.upsert, .nothing) : (.update, .exists)
        }
    }

    private static func describe(_ version: Instant?) -> String {
        guard let version else { return "null" }
        return "VersionPrecondition{exactBaseVersion=\(version.unixMicros), maxBaseVersion=null}"
    }

    /// Throws the emulator's refusal when `writes` name a document more than once in an order it
    /// cannot collapse; a request naming each document once costs one comparison.
    static func check(_ writes: [Write]) throws(FirestoreError) {
        guard writes.count > 1 else { return }
        // What the writes so far left for each document: the last one's kind, the first one's
        // update time (the collapsed mutation's precondition).
        var collapsed: [ResourcePath: (last: Verb, version: Instant?)] = [:]
        for w in writes {
            let (verb, needs) = classify(w)
            let version = w.precondition?.updateTime
            guard let before = collapsed[w.path] else {
                collapsed[w.path] = (verb, version)
                continue
            }
            if needs == .missing && before.last != .delete || needs == .exists && before.last == .delete {
                throw .invalidArgument("Cannot \(before.last.rawValue) then \(verb.rawValue) an entity in the same request.")
            }
            if let version, version != before.version {
                throw .invalidArgument("Cannot collapse mutations with different version preconditions (\(describe(before.version)) and \(describe(version)))")
            }
            collapsed[w.path] = (verb, before.version)
        }
    }
}
