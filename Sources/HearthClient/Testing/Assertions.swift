/// A failed HearthClient expectation; throwing it fails an XCTest or Swift Testing test alike.
public struct HearthExpectationFailure: Error, CustomStringConvertible {
    public let message: String
    public let fileID: String
    public let line: Int
    public var description: String { "\(fileID):\(line): \(message)" }
}

/// Runs `body` and expects a PERMISSION_DENIED error (Firestore rules, uploads API ownership).
///
/// Works in XCTest and Swift Testing without importing either: it returns the error for further
/// checks, and throws `HearthExpectationFailure` when `body` succeeds or fails otherwise.
/// ```swift
/// let denied = try await assertPermissionDenied { try await bobsFirestore.get(FileDoc.self, at: alicesPath) }
/// #expect(denied.description.contains("false for 'get'"))
/// ```
@discardableResult
public func assertPermissionDenied<T>(_ message: @autoclosure () -> String = "", fileID: String = #fileID, line: Int = #line,
                                      _ body: () async throws -> T) async throws -> GoogleAPIError {
    let error = try await assertThrowsHearthError(message(), fileID: fileID, line: line, body)
    guard case .api(let e) = error, e.status == "PERMISSION_DENIED" else {
        throw HearthExpectationFailure(message: prefix(message()) + "expected PERMISSION_DENIED, got \(error)", fileID: fileID, line: line)
    }
    return e
}

/// Runs `body` and expects an S3 error with `code` (e.g. `SignatureDoesNotMatch`, `AccessDenied`).
@discardableResult
public func assertS3Error<T>(_ code: String, _ message: @autoclosure () -> String = "", fileID: String = #fileID, line: Int = #line,
                             _ body: () async throws -> T) async throws -> S3ErrorResponse {
    let error = try await assertThrowsHearthError(message(), fileID: fileID, line: line, body)
    guard case .s3(let e) = error, e.code == code else {
        throw HearthExpectationFailure(message: prefix(message()) + "expected S3 error \(code), got \(error)", fileID: fileID, line: line)
    }
    return e
}

/// Runs `body` and expects a Google-style API error with HTTP status `httpStatus` (and `status` when given).
@discardableResult
public func assertAPIError<T>(httpStatus: Int, status: String? = nil, _ message: @autoclosure () -> String = "",
                              fileID: String = #fileID, line: Int = #line, _ body: () async throws -> T) async throws -> GoogleAPIError {
    let error = try await assertThrowsHearthError(message(), fileID: fileID, line: line, body)
    guard case .api(let e) = error, e.httpStatus == httpStatus, status == nil || e.status == status else {
        throw HearthExpectationFailure(message: prefix(message()) + "expected HTTP \(httpStatus) \(status ?? ""), got \(error)",
                                       fileID: fileID, line: line)
    }
    return e
}

/// Runs `body` and expects it to throw a `HearthClientError`, which it returns.
@discardableResult
public func assertThrowsHearthError<T>(_ message: @autoclosure () -> String = "", fileID: String = #fileID, line: Int = #line,
                                       _ body: () async throws -> T) async throws -> HearthClientError {
    let value: T
    do {
        value = try await body()
    } catch let e as HearthClientError {
        return e
    } catch {
        throw HearthExpectationFailure(message: prefix(message()) + "expected a HearthClientError, got \(error)", fileID: fileID, line: line)
    }
    throw HearthExpectationFailure(message: prefix(message()) + "expected an error, but the call succeeded with \(value)", fileID: fileID, line: line)
}

private func prefix(_ message: String) -> String { message.isEmpty ? "" : message + ": " }
