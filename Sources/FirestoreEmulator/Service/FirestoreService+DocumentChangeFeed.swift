import HearthCore

/// Committed document changes for watchers outside Firestore (the UI's live data browser), from
/// the same change feed Listen streams are fed from.
extension FirestoreService: DocumentChangeFeed {
    public func watchDocumentChanges(_ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void) {
        watchDocumentChanges(when: { true }, handler)
    }

    public func watchDocumentChanges(when wanted: @escaping @Sendable () -> Bool,
                                     _ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void) {
        // Asked by the feed before the notices are made (each names its document by its joined
        // path), and with no Listen stream open before the change is even queued.
        listeners.feed.tap(when: wanted) { change in
            switch change.kind {
            case .cleared:
                handler([DocumentChangeNotice(database: change.database?.name, path: "", kind: .cleared, time: change.commitTime)])
            case .documents(let docs, _):
                guard let db = change.database?.name else { return }
                handler(docs.map { d in
                    DocumentChangeNotice(database: db, path: d.path.string,
                                         kind: d.after == nil ? .deleted : d.before == nil ? .created : .updated,
                                         time: change.commitTime)
                })
            }
        }
    }
}
