/// A gRPC status: what a call ends with, in the `grpc-status` / `grpc-message` trailers.
///
/// Related: https://grpc.github.io/grpc/core/md_doc_statuscodes.html
public struct GRPCStatus: Error, Sendable, Equatable {
    /// The canonical status codes (google.rpc.Code).
    public enum Code: Int, Sendable, CaseIterable {
        case ok = 0
        case cancelled = 1
        case unknown = 2
        case invalidArgument = 3
        case deadlineExceeded = 4
        case notFound = 5
        case alreadyExists = 6
        case permissionDenied = 7
        case resourceExhausted = 8
        case failedPrecondition = 9
        case aborted = 10
        case outOfRange = 11
        case unimplemented = 12
        case `internal` = 13
        case unavailable = 14
        case dataLoss = 15
        case unauthenticated = 16
    }

    public var code: Code
    public var message: String
    /// A serialized `google.rpc.Status` sent as `grpc-status-details-bin`, when the service has details.
    public var details: [UInt8]?

    public init(_ code: Code, _ message: String = "", details: [UInt8]? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public static let ok = GRPCStatus(.ok)
}
