// The variables a path template's `bind()` bound, kept beside the path's segments.
//
// The rules reference gives a path `x.f` and `x[f]`, "value at binding field name f", and the
// official emulator answers `path('/a/{x}').bind({'x': 'v'}).x` with 'v'. A name belongs to one
// segment there: a slice keeps the names of the segments it keeps (`[1:2].x` is 'v', `[0:1].x` is
// undefined), a path interpolated whole into a literal keeps them at its new places
// (`(/q/$(p)).x`), and a path made any other way (a literal, `path(string)`, `request.path`, a
// second `bind`) has none. Equality, `string()`, `get()` and every other reader of a path see only
// its segments, so the names ride along as an optional second value of `RulesValue.path` that
// only these few operations read or write.

import HearthCore

/// A bound path's variables: which segment each name bound (`RulesValue.path`'s `names`).
public struct RulesPathNames: Sendable, Equatable {
    /// One bound variable: the segment it became and its name.
    struct Entry: Sendable, Equatable {
        var segment: Int
        var name: String
        /// The segments a `{name=**}` variable became (it binds a path, and `p.name` is that
        /// path); nil for a `{name}`, which became the one segment at `segment`.
        var span: Int? = nil
    }

    /// In segment order.
    private(set) var entries: [Entry]

    init(_ entries: [Entry]) { self.entries = entries }

    /// The segment `name` bound, if any (names compared by their bytes, as map keys are).
    func segment(named name: String) -> Int? { entry(named: name)?.segment }

    /// The entry `name` bound, if any.
    func entry(named name: String) -> Entry? {
        entries.first { ExactString.equal($0.name, name) }
    }

    /// Whether `name` is one of the bound variables.
    func contains(_ name: String) -> Bool { segment(named: name) != nil }

    /// The names of the segments `range` keeps, renumbered from its start (a slice); nil when
    /// none is kept.
    func sliced(_ range: Range<Int>) -> RulesPathNames? {
        let kept = entries.filter { range.contains($0.segment) && $0.segment + ($0.span ?? 1) <= range.upperBound }
            .map { Entry(segment: $0.segment - range.lowerBound, name: $0.name, span: $0.span) }
        return kept.isEmpty ? nil : RulesPathNames(kept)
    }

    /// The names moved `offset` segments on (a path interpolated after `offset` segments).
    func shifted(by offset: Int) -> RulesPathNames {
        RulesPathNames(entries.map { Entry(segment: $0.segment + offset, name: $0.name, span: $0.span) })
    }

    /// `a`'s entries, then `b`'s (segments already placed; either may be nil).
    static func joined(_ a: RulesPathNames?, _ b: RulesPathNames?) -> RulesPathNames? {
        guard let b else { return a }
        guard let a else { return b }
        return RulesPathNames(a.entries + b.entries)
    }
}
