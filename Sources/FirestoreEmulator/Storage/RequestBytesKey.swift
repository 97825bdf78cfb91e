/// A request's bytes as a dictionary key, hashed in one go (`[UInt8]`'s own hash feeds them one
/// by one: ~2.5k instructions for a RunQuery request). The same gRPC RunQueryRequest bytes name
/// both the query `ParsedQueryCache` read from them and the answer `DocumentCache` keeps for it.
struct RequestBytesKey: Hashable {
    let bytes: [UInt8]

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
