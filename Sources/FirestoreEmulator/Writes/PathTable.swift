/// Values by document path for one commit (the documents it read, the state its writes leave),
/// in the order their paths were first set.
///
/// A commit names a few documents, usually one, and each is looked up several times inside the
/// single writer's transaction: through a `Dictionary` each lookup hashed every segment of the
/// path (the user id, the document id) again. Up to `scanLimit` paths are found by comparing
/// them, which stops at the first differing segment; a larger batch (Firestore allows 500
/// writes) gets a dictionary index as well.
struct PathTable<Value> {
    private(set) var entries: [(path: ResourcePath, value: Value)] = []
    private var index: [ResourcePath: Int]?

    static var scanLimit: Int { 16 }

    init() {}

    subscript(path: ResourcePath) -> Value? {
        get { position(of: path).map { entries[$0].value } }
        set {
            if let i = position(of: path) {
                if let newValue {
                    entries[i].value = newValue
                } else {
                    // Never done by a commit; kept correct: later entries move up.
                    entries.remove(at: i)
                    rebuildIndex()
                }
            } else if let newValue {
                entries.append((path, newValue))
                if index != nil {
                    index?[path] = entries.count - 1
                } else if entries.count > Self.scanLimit {
                    rebuildIndex()
                }
            }
        }
    }

    private func position(of path: ResourcePath) -> Int? {
        if let index { return index[path] }
        return entries.firstIndex { $0.path == path }
    }

    private mutating func rebuildIndex() {
        guard entries.count > Self.scanLimit else { index = nil; return }
        var built: [ResourcePath: Int] = [:]
        built.reserveCapacity(entries.count)
        for (i, e) in entries.enumerated() { built[e.path] = i }
        index = built
    }
}
