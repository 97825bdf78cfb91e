/// A target's invariant that did not hold on some input: two paths that must agree disagreed, or
/// an answer was malformed. libFuzzer's driver turns it into a crash (so the input is kept); the
/// replay tests record it as a test failure with the input.
public struct FuzzFailure: Error, CustomStringConvertible {
    /// What disagreed, with both sides.
    public let description: String

    public init(_ description: String) { self.description = description }
}
