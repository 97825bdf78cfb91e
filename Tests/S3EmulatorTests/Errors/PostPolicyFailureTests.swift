import Foundation
import HearthCore
import Testing
@testable import S3Emulator

/// Every form-upload refusal renders as S3's error document, with its extra elements in order
/// and Hearth's diagnosis.
@Suite struct PostPolicyFailureTests {
    static let all: [(PostPolicyFailure, Int, String, [String])] = [
        (.notMultipart(contentType: "text/plain"), 412, "PreconditionFailed", ["Condition"]),
        (.malformedBody(reason: "r"), 400, "MalformedPOSTRequest", []),
        (.preDataTooLarge, 400, "MaxPostPreDataLengthExceededError", ["MaxPostPreDataLengthBytes"]),
        (.missingField(name: "key"), 400, "InvalidArgument", ["ArgumentName", "ArgumentValue"]),
        (.noFile, 400, "InvalidArgument", ["ArgumentName", "ArgumentValue"]),
        (.emptyKey, 400, "InvalidArgument", ["ArgumentName", "ArgumentValue"]),
        (.anonymous, 403, "AccessDenied", []),
        (.policyWithoutSignature, 403, "AccessDenied", []),
        (.sigV2NotSupported, 400, "InvalidRequest", []),
        (.invalidPolicy(detail: "Invalid JSON."), 400, "InvalidPolicyDocument", []),
        (.expired(expiration: "2020-01-01T00:00:00Z", serverTime: Instant(unixSeconds: 1_700_000_000)), 403, "AccessDenied", []),
        (.conditionFailed(condition: "[\"eq\", \"$acl\", \"x\"]", diagnosis: "d"), 403, "AccessDenied", []),
        (.extraFields(["acl"]), 403, "AccessDenied", []),
        (.fileTooLarge(size: 11, max: 10), 400, "EntityTooLarge", ["ProposedSize", "MaxSizeAllowed"]),
        (.fileTooSmall(size: 1, min: 10), 400, "EntityTooSmall", ["ProposedSize", "MinSizeAllowed"]),
    ]

    @Test(arguments: all)
    func rendering(failure: PostPolicyFailure, status: Int, code: String, elements: [String]) throws {
        let error = S3Error.postForm(failure)
        let response = S3ErrorRenderer.response(error, requestID: "R", hostID: "H", method: "POST")
        #expect(response.status == status)
        let xml = try S3XMLParser.parse(try #require(response.bodyBytes))
        #expect(xml.childText("Code") == code)
        #expect(xml.childText("Message") == failure.message)
        #expect(Array(xml.children.map(\.name).dropFirst(2).prefix(elements.count)) == elements)
        let diagnosis = try #require(failure.diagnosis)
        #expect(!diagnosis.isEmpty)
        #expect(xml.childText("Diagnosis") == diagnosis)
        #expect(response.headers["x-hearth-diagnosis"] != nil)
    }
}
