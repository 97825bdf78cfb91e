import HearthCore
import Testing
@testable import S3Emulator

@Suite struct SigV4FailureTests {
    static let t = Instant(rfc3339: "2026-11-30T06:00:00Z")!
    static let mismatch = SignatureMismatch(accessKey: "AK", stringToSign: "A\nB", signatureProvided: "sig", canonicalRequest: "GET\n/", diagnosis: "why\nnot")

    /// One of every case, with S3's code and status.
    static let table: [(SigV4Failure, String, Int)] = [
        (.anonymous, "AccessDenied", 403),
        (.unsupportedAuthorizationType(header: "x"), "InvalidArgument", 400),
        (.multipleAuthMechanisms(header: "x"), "InvalidArgument", 400),
        (.headerMissingComponents, "AuthorizationHeaderMalformed", 400),
        (.headerComponentMalformed(component: "x"), "AuthorizationHeaderMalformed", 400),
        (.headerCredentialMalformed, "AuthorizationHeaderMalformed", 400),
        (.headerEmptyAccessKey, "AuthorizationHeaderMalformed", 400),
        (.headerCredentialDateFormat(date: "x"), "AuthorizationHeaderMalformed", 400),
        (.headerWrongRegion(given: "a", expected: "b"), "AuthorizationHeaderMalformed", 400),
        (.headerWrongService(given: "x"), "AuthorizationHeaderMalformed", 400),
        (.headerWrongTerminal(given: "x"), "AuthorizationHeaderMalformed", 400),
        (.headerCredentialDateMismatch(credentialDate: "a", requestDate: "b"), "AuthorizationHeaderMalformed", 400),
        (.missingDate, "AccessDenied", 403),
        (.queryMissingParameters, "AuthorizationQueryParametersError", 400),
        (.queryUnsupportedAlgorithm(given: "x"), "AuthorizationQueryParametersError", 400),
        (.queryDateFormat(given: "x"), "AuthorizationQueryParametersError", 400),
        (.queryExpiresNotNumber(given: "x"), "AuthorizationQueryParametersError", 400),
        (.queryExpiresNegative, "AuthorizationQueryParametersError", 400),
        (.queryExpiresTooLarge(given: 604_801), "AuthorizationQueryParametersError", 400),
        (.queryCredentialMalformed, "AuthorizationQueryParametersError", 400),
        (.queryEmptyAccessKey, "AuthorizationQueryParametersError", 400),
        (.queryCredentialDateFormat(date: "x"), "AuthorizationQueryParametersError", 400),
        (.queryWrongRegion(given: "a", expected: "b"), "AuthorizationQueryParametersError", 400),
        (.queryWrongService(given: "x"), "AuthorizationQueryParametersError", 400),
        (.queryWrongTerminal(given: "x"), "AuthorizationQueryParametersError", 400),
        (.queryCredentialDateMismatch(credentialDate: "a", requestDate: "b"), "AuthorizationQueryParametersError", 400),
        (.invalidAccessKeyId(accessKey: "x"), "InvalidAccessKeyId", 403),
        (.bucketAccessDenied(accessKey: "x", bucket: "b"), "AccessDenied", 403),
        (.requestTimeTooSkewed(requestTime: "x", serverTime: t), "RequestTimeTooSkewed", 403),
        (.requestExpired(expiresSeconds: 1, expiresAt: t, serverTime: t), "AccessDenied", 403),
        (.requestNotYetValid(requestDate: t, expiresAt: t, serverTime: t), "AccessDenied", 403),
        (.missingContentSHA256, "InvalidRequest", 400),
        (.invalidContentSHA256(value: "x"), "InvalidArgument", 400),
        (.headersNotSigned(names: ["host"]), "AccessDenied", 403),
        (.signatureDoesNotMatch(mismatch), "SignatureDoesNotMatch", 403),
        (.chunkSignatureDoesNotMatch(mismatch), "SignatureDoesNotMatch", 403),
        (.trailerSignatureDoesNotMatch(mismatch), "SignatureDoesNotMatch", 403),
        (.contentSHA256Mismatch(clientComputed: "a", computed: "b"), "XAmzContentSHA256Mismatch", 400),
        (.missingDecodedContentLength, "MissingContentLength", 411),
        (.invalidDecodedContentLength(value: "x"), "InvalidArgument", 400),
        (.decodedLengthMismatch(declared: 2, received: 1), "IncompleteBody", 400),
        (.malformedChunkedEncoding(detail: "x"), "InvalidRequest", 400),
        (.incompleteBody, "IncompleteBody", 400),
        (.multipleChecksums, "InvalidRequest", 400),
        (.invalidChecksumHeader(name: "x"), "InvalidRequest", 400),
        (.invalidChecksumTrailer(name: "x"), "InvalidRequest", 400),
        (.checksumMismatch(algorithm: .sha256, declared: "a", computed: "b"), "BadDigest", 400),
        (.unsupportedTrailer(name: "x"), "InvalidRequest", 400),
        (.malformedTrailer(detail: "x"), "MalformedTrailerError", 400),
        (.missingTrailer(name: "x"), "MalformedTrailerError", 400),
        (.sigV2NotSupported(presigned: false), "InvalidRequest", 400),
        (.sigV2HeaderMalformed(header: "x"), "InvalidArgument", 400),
        (.sigV2MissingQueryParameters, "AccessDenied", 403),
        (.sigV2InvalidExpires(given: "x"), "AccessDenied", 403),
        (.sigV2Expired(expiresAt: t, serverTime: t), "AccessDenied", 403),
        (.sigV2SignatureDoesNotMatch(mismatch), "SignatureDoesNotMatch", 403),
    ]

    @Test func everyCaseHasCodeStatusAndMessage() {
        for (failure, code, status) in Self.table {
            #expect(failure.code == code, "\(failure)")
            #expect(failure.httpStatus == status, "\(failure)")
            #expect(!failure.message.isEmpty)
            #expect(failure.xmlElements().prefix(2).map(\.1) == [code, failure.message])
        }
    }

    @Test func signatureFieldsInS3Order() {
        let failure = SigV4Failure.signatureDoesNotMatch(Self.mismatch)
        #expect(failure.xmlElements().map(\.0) == ["Code", "Message", "AWSAccessKeyId", "StringToSign", "SignatureProvided", "StringToSignBytes",
                                                   "CanonicalRequest", "CanonicalRequestBytes"])
        #expect(failure.xmlFields[3].1 == "41 0a 42")
        #expect(failure.xmlFields[5].1 == "47 45 54 0a 2f")
        #expect(failure.diagnosis == "why\nnot")
        #expect(failure.diagnosisHeaderValue == "why not")
        #expect(SigV4Failure.chunkSignatureDoesNotMatch(SignatureMismatch(accessKey: "AK", stringToSign: "s", signatureProvided: "p")).xmlFields.count == 4)
    }

    @Test func checksumMessages() {
        #expect(SigV4Failure.checksumMismatch(algorithm: .crc32c, declared: "a", computed: "b").message == "The CRC32C you specified did not match the calculated checksum.")
        #expect(SigV4Failure.decodedLengthMismatch(declared: 5, received: 3).xmlFields.map(\.1) == ["5", "3"])
    }

    @Test func diagnosisHeaderIsPrintableASCII() {
        let failure = SigV4Failure.signatureDoesNotMatch(SignatureMismatch(accessKey: "AK", stringToSign: "", signatureProvided: "",
                                                                          diagnosis: "Content-Type was signed as ïmage\t/jpeg"))
        #expect(failure.diagnosisHeaderValue == "Content-Type was signed as  mage /jpeg")
        #expect(SigV4Failure.queryDateFormat(given: "x").diagnosisHeaderValue == nil)
    }
}
