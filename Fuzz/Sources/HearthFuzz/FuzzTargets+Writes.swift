import Foundation
import HearthCore
@testable import FirestoreEmulator

/// Differential: the direct write decoders against the general path they stand for. A REST
/// commit body (`WriteJSONDecoder`, reading the text with `PlainJSONReader`) and a gRPC
/// CommitRequest (`WriteProtoDecoder`) are read straight into `Write`s when they are in a plain
/// form and left to the general path (the JSON tree or proto3 JSON, then `WriteParser`) otherwise.
/// Whatever the direct decoder takes, the general path must accept too and build the same writes
/// (and, for REST, the same `transaction`): a direct decoder that accepted more would store what
/// Firestore refuses, one that built another write would store other data.
extension FuzzTargets {
    static let writesDatabase = DatabaseID(project: "p", database: "(default)")

    /// The first byte picks the form (even: a REST body, odd: a gRPC CommitRequest), the rest is it.
    static func writes(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard let form = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        if form & 1 == 0 {
            for transaction in [true, false] {
                guard let direct = WriteJSONDecoder(database: writesDatabase).body(body, transaction: transaction) else { continue }
                FuzzChecks.count("writes")
                switch WriteJSONDecoder(database: writesDatabase).general(body, transaction: transaction) {
                case .success(let general):
                    guard same(direct.writes, general.writes), direct.transaction == general.transaction else {
                        throw FuzzFailure("REST body \(String(decoding: body, as: UTF8.self).debugDescription) (transaction allowed: \(transaction)): direct \(direct), general \(general)")
                    }
                case .failure(let error):
                    throw FuzzFailure("REST body \(String(decoding: body, as: UTF8.self).debugDescription) (transaction allowed: \(transaction)): direct \(direct), general refused: \(error)")
                }
            }
        } else {
            guard let request = WriteProtoDecoder.commitRequest(body),
                  let direct = WriteProtoDecoder(database: writesDatabase).writes(request.writes) else { return }
            FuzzChecks.count("writes")
            switch WriteProtoDecoder(database: writesDatabase).general(body) {
            case .success(let general):
                guard same(direct, general) else {
                    throw FuzzFailure("CommitRequest \(body): direct \(direct), general \(general)")
                }
            case .failure(let error):
                throw FuzzFailure("CommitRequest \(body): direct \(direct), general refused: \(error)")
            }
        }
    }

    /// Equal, or printed alike (a NaN double is unequal to itself in both).
    private static func same(_ a: [Write], _ b: [Write]) -> Bool {
        a == b || String(reflecting: a) == String(reflecting: b)
    }
}
