import HearthCore

/// Computes what one write does to a document: the new version (nil after a delete) and the
/// transform results, exactly as the `Write` and `DocumentTransform` messages document.
enum WriteApplier {
    struct Outcome {
        var document: StoredDocument?
        var transformResults: [FirestoreValue]
    }

    /// Applies `write` to `before` at `commitTime`.
    static func apply(_ write: Write, to before: StoredDocument?, at commitTime: Instant) -> Outcome {
        var fields: [ExactString: FirestoreValue]
        switch write.operation {
        case .delete:
            return Outcome(document: nil, transformResults: [])
        case .update(let newFields, nil):
            fields = newFields
        case .update(let newFields, let mask?):
            fields = before?.fields ?? [:]
            for path in mask {
                if let v = DocumentFields.value(at: path, in: newFields) {
                    DocumentFields.set(v, at: path, in: &fields)
                } else {
                    DocumentFields.remove(at: path, in: &fields)
                }
            }
        case .transform:
            fields = before?.fields ?? [:]
        }
        var results: [FirestoreValue] = []
        for t in write.transforms {
            let current = DocumentFields.value(at: t.field, in: fields)
            let (stored, result) = transform(t.kind, current: current, commitTime: commitTime)
            DocumentFields.set(stored, at: t.field, in: &fields)
            results.append(result)
        }
        var updateTime = commitTime
        if let before, StoredValueCodec.encodeAlike(before.fields, fields) {
            // An unchanged document keeps its update time.
            updateTime = before.updateTime
        }
        let doc = StoredDocument(path: write.path, fields: fields, createTime: before?.createTime ?? commitTime, updateTime: updateTime)
        return Outcome(document: doc, transformResults: results)
    }

    /// The request time of a commit at `commitTime`: what server timestamps store and rules see as
    /// `request.time` (equal, so `createdAt == request.time` holds for a server timestamp).
    static func requestTime(_ commitTime: Instant) -> Instant {
        let m = commitTime.unixMicros
        return Instant(unixMicros: m - ((m % 1000) + 1000) % 1000)
    }

    /// The commit time of a commit that sets a server timestamp on a document last written at
    /// `previous`, and how long (µs) to wait before taking it: `t` at once, or, when `t` falls in
    /// `previous`'s millisecond, the next millisecond's first microsecond once the clock (`now`) is
    /// within a millisecond of it. REQUEST_TIME has millisecond precision and a commit here takes
    /// tens of µs, so a client that writes a server timestamp, reads it and writes another to the
    /// same document (the Go client's `TestIntegration_MergeServerTimestamp`) would get the same
    /// timestamp twice, which production's round trips never allow. Commit times run at most a
    /// millisecond ahead of the clock and the wait is at most one: when they are further ahead
    /// (a clock moved back), `t` is kept and the timestamps stay equal.
    static func commitTime(_ t: Instant, afterStampedAt previous: Instant, now: Instant) -> (time: Instant, waitMicros: Int64) {
        let stamp = requestTime(t).unixMicros
        guard requestTime(previous).unixMicros >= stamp else { return (t, 0) }
        let next = stamp + 1000
        let wait = next - 1000 - now.unixMicros
        guard wait <= 1000 else { return (t, 0) }
        return (Instant(unixMicros: next), max(0, wait))
    }

    /// Whether a write sets a server timestamp (`commitTime(_:afterStampedAt:now:)` applies).
    static func setsServerTime(_ w: Write) -> Bool {
        w.transforms.contains { $0.kind == .serverTime }
    }

    /// The stored value and the reported result of one transform.
    static func transform(_ kind: FieldTransform.Kind, current: FirestoreValue?, commitTime: Instant) -> (FirestoreValue, FirestoreValue) {
        switch kind {
        case .serverTime:
            // REQUEST_TIME has millisecond precision (ServerValue docs; the emulator agrees), while
            // update times keep microseconds.
            let t = requestTime(commitTime)
            return (.timestamp(t), .timestamp(t))
        case .increment(let operand):
            let v = increment(current, by: operand)
            return (v, v)
        case .maximum(let operand):
            let v = extreme(current, operand, wantMax: true)
            return (v, v)
        case .minimum(let operand):
            let v = extreme(current, operand, wantMax: false)
            return (v, v)
        case .appendMissingElements(let elements):
            var array = current?.arrayValue ?? []
            for e in elements where !array.contains(where: { $0.firestoreEquals(e) }) {
                array.append(e)
            }
            return (.array(array), .null)
        case .removeAllFromArray(let elements):
            let array = (current?.arrayValue ?? []).filter { e in !elements.contains { $0.firestoreEquals(e) } }
            return (.array(array), .null)
        }
    }

    /// Integer + integer saturates at the Int64 bounds; anything with a double is a double;
    /// a missing or non-numeric field becomes the operand.
    static func increment(_ current: FirestoreValue?, by operand: FirestoreValue) -> FirestoreValue {
        switch (current, operand) {
        case (.integer(let a)?, .integer(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            if overflow { return .integer(b > 0 ? .max : .min) }
            return .integer(sum)
        case (.integer(let a)?, .double(let b)): return .double(Double(a) + b)
        case (.double(let a)?, .integer(let b)): return .double(a + Double(b))
        case (.double(let a)?, .double(let b)): return .double(a + b)
        default: return operand
        }
    }

    /// `maximum`/`minimum`: the operand when the field is missing or not a number; NaN wins;
    /// equal values (3 and 3.0, 0 and -0.0) keep the stored one.
    static func extreme(_ current: FirestoreValue?, _ operand: FirestoreValue, wantMax: Bool) -> FirestoreValue {
        guard let current, current.isNumber else { return operand }
        if current.isNaN { return current }
        if operand.isNaN { return operand }
        let c = FirestoreValue.compare(operand, current)
        if c == 0 { return current }
        return (c > 0) == wantMax ? operand : current
    }
}
