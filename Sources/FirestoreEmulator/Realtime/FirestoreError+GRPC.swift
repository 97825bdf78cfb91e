import HearthGRPC

extension FirestoreError {
    /// The gRPC status a stream ends with for this error (same code and message as REST's).
    var grpcStatus: GRPCStatus {
        GRPCStatus(GRPCStatus.Code(rawValue: Int(grpcCode)) ?? .internal, message)
    }
}
