import Foundation

/// JSON coding shared by the REST clients.
enum WireJSON {
    static func encode<T: Encodable>(_ value: T) throws(HearthClientError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do { return try encoder.encode(value) } catch { throw .invalidArgument("cannot encode request: \(error)") }
    }

    static func decode<T: Decodable>(_ type: T.Type, from result: HTTPResult, what: String) throws(HearthClientError) -> T {
        do { return try JSONDecoder().decode(type, from: result.body) } catch {
            throw .decoding("\(what): \(error) in \(result.bodyText.prefix(500))")
        }
    }
}
