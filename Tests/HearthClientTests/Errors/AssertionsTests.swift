import Testing
@testable import HearthClient

@Suite struct AssertionsTests {
    struct Other: Error {}
    static let denied = HearthClientError.api(GoogleAPIError(httpStatus: 403, status: "PERMISSION_DENIED", message: "false for 'get' @ L5"))

    @Test func permissionDeniedIsReturned() async throws {
        let e = try await assertPermissionDenied { () async throws -> Int in throw Self.denied }
        #expect(e.message == "false for 'get' @ L5")
    }

    @Test func successIsAFailure() async throws {
        await #expect(throws: HearthExpectationFailure.self) { try await assertPermissionDenied { 42 } }
    }

    @Test func otherErrorsAreFailures() async throws {
        await #expect(throws: HearthExpectationFailure.self) {
            try await assertPermissionDenied { () async throws -> Int in throw HearthClientError.transport("x") }
        }
        await #expect(throws: HearthExpectationFailure.self) {
            try await assertPermissionDenied { () async throws -> Int in throw Other() }
        }
        await #expect(throws: HearthExpectationFailure.self) {
            try await assertS3Error("AccessDenied") { () async throws -> Int in throw Self.denied }
        }
    }

    @Test func apiErrorsMatchStatusAndName() async throws {
        let e = try await assertAPIError(httpStatus: 403, status: "PERMISSION_DENIED") { () async throws -> Int in throw Self.denied }
        #expect(e.httpStatus == 403)
        await #expect(throws: HearthExpectationFailure.self) {
            try await assertAPIError(httpStatus: 401) { () async throws -> Int in throw Self.denied }
        }
    }

    @Test func s3ErrorsMatchTheCode() async throws {
        let e = try await assertS3Error("NotFound") { () async throws -> Int in throw HearthClientError.s3(S3ErrorResponse(bodilessStatus: 404)) }
        #expect(e.httpStatus == 404)
    }
}
