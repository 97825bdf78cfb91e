import HearthCore
import Testing
@testable import S3Emulator

@Suite struct AuthorizationParserTests {
    static let date = [(name: "x-amz-date", value: "20261130T060257Z")]

    static func header(_ value: String, headers: [(name: String, value: String)] = date) -> Result<SigV4Authorization, SigV4Failure> {
        Result { () throws(SigV4Failure) in try AuthorizationParser.parseHeader(value, headers: headers, expectedRegion: "us-east-1") }
    }

    static func query(_ raw: String) -> Result<SigV4Authorization, SigV4Failure> {
        Result { () throws(SigV4Failure) in try AuthorizationParser.parseQuery(QueryParameters(rawQuery: raw), expectedRegion: "us-east-1") }
    }

    @Test func schemes() throws {
        func scheme(_ authorization: String?, _ query: String = "") -> Result<AuthScheme, SigV4Failure> {
            Result { () throws(SigV4Failure) in try AuthorizationParser.scheme(authorization: authorization, query: QueryParameters(rawQuery: query)) }
        }
        #expect(scheme(nil).sigValue == .anonymous)
        #expect(scheme(nil, "list-type=2&prefix=a").sigValue == .anonymous)
        #expect(scheme("AWS4-HMAC-SHA256 Credential=x").sigValue == .sigV4Header("AWS4-HMAC-SHA256 Credential=x"))
        #expect(scheme(nil, "X-Amz-Algorithm=AWS4-HMAC-SHA256").sigValue == .sigV4Query)
        #expect(scheme(nil, "X-Amz-Signature=abc").sigValue == .sigV4Query)
        #expect(scheme("AWS AK:sig").sigValue == .sigV2Header("AWS AK:sig"))
        #expect(scheme(nil, "AWSAccessKeyId=AK&Signature=x&Expires=1").sigValue == .sigV2Query)
        #expect(scheme("Bearer token").sigFailure == .unsupportedAuthorizationType(header: "Bearer token"))
        #expect(scheme("AWS4-HMAC-SHA512 Credential=x").sigFailure == .unsupportedAuthorizationType(header: "AWS4-HMAC-SHA512 Credential=x"))
        #expect(scheme("AWS4-HMAC-SHA256 x", "X-Amz-Credential=a").sigFailure == .multipleAuthMechanisms(header: "AWS4-HMAC-SHA256 x"))
        #expect(scheme("AWS4-HMAC-SHA256 x", "Signature=a").sigFailure == .multipleAuthMechanisms(header: "AWS4-HMAC-SHA256 x"))
    }

    @Test(arguments: [
        "AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
        "AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-date,Signature=abc",
        "AWS4-HMAC-SHA256   Signature=abc,  Credential=AK/20261130/us-east-1/s3/aws4_request , SignedHeaders=Host;X-Amz-Date",
    ])
    func headerForms(_ value: String) throws {
        let auth = try #require(Self.header(value).sigValue)
        #expect(auth.credential == CredentialScope(accessKey: "AK", date: "20261130", region: "us-east-1", service: "s3", terminal: "aws4_request"))
        #expect(auth.signedHeaders == ["host", "x-amz-date"])
        #expect(auth.signature == "abc")
        #expect(auth.amzDate == "20261130T060257Z")
        #expect(auth.requestTime == Instant(rfc3339: "2026-11-30T06:02:57Z"))
        #expect(!auth.presigned)
        #expect(auth.credential.scope == "20261130/us-east-1/s3/aws4_request")
    }

    @Test(arguments: [
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, Signature=abc", SigV4Failure.headerMissingComponents),
        ("AWS4-HMAC-SHA256", .headerMissingComponents),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, SignedHeaders, Signature=abc", .headerComponentMalformed(component: "SignedHeaders")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, Foo=bar, SignedHeaders=host, Signature=abc", .headerComponentMalformed(component: "Foo=bar")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3, SignedHeaders=host, Signature=abc", .headerCredentialMalformed),
        ("AWS4-HMAC-SHA256 Credential=/20261130/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", .headerEmptyAccessKey),
        ("AWS4-HMAC-SHA256 Credential=AK/2026113/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", .headerCredentialDateFormat(date: "2026113")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261340/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", .headerCredentialDateFormat(date: "20261340")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=abc", .headerWrongRegion(given: "eu-west-1", expected: "us-east-1")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s4/aws4_request, SignedHeaders=host, Signature=abc", .headerWrongService(given: "s4")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_reques, SignedHeaders=host, Signature=abc", .headerWrongTerminal(given: "aws4_reques")),
        ("AWS4-HMAC-SHA256 Credential=AK/20261129/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", .headerCredentialDateMismatch(credentialDate: "20261129", requestDate: "20261130T060257Z")),
    ])
    func headerFailures(value: String, failure: SigV4Failure) {
        #expect(Self.header(value).sigFailure == failure)
    }

    @Test func headerDates() throws {
        let value = "AWS4-HMAC-SHA256 Credential=AK/19941106/us-east-1/s3/aws4_request, SignedHeaders=host;date, Signature=abc"
        let auth = try #require(Self.header(value, headers: [("date", "Sun, 06 Nov 1994 08:49:37 GMT")]).sigValue)
        #expect(auth.amzDate == "19941106T084937Z")
        #expect(auth.rawRequestTime == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(Self.header(value, headers: []).sigFailure == .missingDate)
        #expect(Self.header(value, headers: [("x-amz-date", "2026-11-30T06:02:57Z")]).sigFailure == .missingDate)
        #expect(Self.header(value, headers: [("date", "yesterday")]).sigFailure == .missingDate)
    }

    static let validQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T060320Z&X-Amz-Expires=900&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Signature=abc"

    @Test func queryForm() throws {
        let auth = try #require(Self.query(Self.validQuery).sigValue)
        #expect(auth.presigned)
        #expect(auth.expires == 900)
        #expect(auth.signedHeaders == ["content-type", "host"])
        #expect(auth.credential.accessKey == "AK")
        #expect(auth.amzDate == "20261130T060320Z")
    }

    @Test(arguments: [
        ("X-Amz-Expires=900", "", SigV4Failure.queryMissingParameters),
        ("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-HMAC-SHA512", .queryUnsupportedAlgorithm(given: "AWS4-HMAC-SHA512")),
        ("X-Amz-Date=20261130T060320Z", "X-Amz-Date=2026-11-30T06:03:20Z", .queryDateFormat(given: "2026-11-30T06:03:20Z")),
        ("X-Amz-Expires=900", "X-Amz-Expires=21600.0", .queryExpiresNotNumber(given: "21600.0")),
        ("X-Amz-Expires=900", "X-Amz-Expires=undefined", .queryExpiresNotNumber(given: "undefined")),
        ("X-Amz-Expires=900", "X-Amz-Expires=-1", .queryExpiresNegative),
        ("X-Amz-Expires=900", "X-Amz-Expires=604801", .queryExpiresTooLarge(given: 604801)),
        ("AK%2F20261130%2Fus-east-1%2Fs3%2Faws4_request", "AK%252F20261130%252Fus-east-1%252Fs3%252Faws4_request", .queryCredentialMalformed),
        ("AK%2F20261130", "%2F20261130", .queryEmptyAccessKey),
        ("AK%2F20261130", "AK%2F2026113", .queryCredentialDateFormat(date: "2026113")),
        ("us-east-1%2Fs3", "us-west-2%2Fs3", .queryWrongRegion(given: "us-west-2", expected: "us-east-1")),
        ("%2Fs3%2F", "%2Fs4%2F", .queryWrongService(given: "s4")),
        ("aws4_request", "aws4", .queryWrongTerminal(given: "aws4")),
        ("AK%2F20261130", "AK%2F20261129", .queryCredentialDateMismatch(credentialDate: "20261129", requestDate: "20261130")),
    ])
    func queryFailures(find: String, replace: String, failure: SigV4Failure) {
        #expect(Self.query(Self.validQuery.replacingOccurrences(of: find, with: replace)).sigFailure == failure)
    }

    @Test func expiresBounds() {
        #expect(Self.query(Self.validQuery.replacingOccurrences(of: "X-Amz-Expires=900", with: "X-Amz-Expires=604800")).sigValue?.expires == 604800)
        #expect(Self.query(Self.validQuery.replacingOccurrences(of: "X-Amz-Expires=900", with: "X-Amz-Expires=0")).sigValue?.expires == 0)
    }

    @Test func sigV2Forms() throws {
        let header = try AuthorizationParser.parseSigV2Header("AWS AKID:frJIUN8DYpKDtOLCwo//yllqDzg=")
        #expect(header.accessKey == "AKID")
        #expect(header.signature == "frJIUN8DYpKDtOLCwo//yllqDzg=")
        #expect(throws: SigV4Failure.sigV2HeaderMalformed(header: "AWS AKID")) { try AuthorizationParser.parseSigV2Header("AWS AKID") }
        #expect(throws: SigV4Failure.sigV2HeaderMalformed(header: "AWS :sig")) { try AuthorizationParser.parseSigV2Header("AWS :sig") }
        let query = try AuthorizationParser.parseSigV2Query(QueryParameters(rawQuery: "AWSAccessKeyId=AK&Signature=a+b%2Fc%3D&Expires=1796022177"))
        #expect(query.signature == "a+b/c=")
        #expect(query.expires == "1796022177")
        #expect(throws: SigV4Failure.sigV2MissingQueryParameters) {
            try AuthorizationParser.parseSigV2Query(QueryParameters(rawQuery: "AWSAccessKeyId=AK&Signature=x"))
        }
    }

    @Test func times() {
        #expect(SigV4Time.parseAmzDate("20261130T060257Z") == Instant(rfc3339: "2026-11-30T06:02:57Z"))
        #expect(SigV4Time.parseAmzDate("20261130T060257") == nil)
        #expect(SigV4Time.parseAmzDate("20261330T060257Z") == nil)
        #expect(SigV4Time.parseAmzDate("20260229T000000Z") == nil)
        #expect(SigV4Time.parseAmzDate("20240229T000000Z") != nil)
        #expect(SigV4Time.amzDate(Instant(rfc3339: "2026-11-30T06:02:57.5Z")!) == "20261130T060257Z")
        #expect(SigV4Time.amzDate(Instant(unixSeconds: 0)) == "19700101T000000Z")
        #expect(SigV4Time.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT") == Instant(rfc3339: "1994-11-06T08:49:37Z"))
        #expect(SigV4Time.parseHTTPDate("Sun Nov  6 08:49:37 1994") == Instant(rfc3339: "1994-11-06T08:49:37Z"))
        #expect(SigV4Time.iso8601(Instant(rfc3339: "2016-09-08T10:09:44.75Z")!) == "2016-09-08T10:09:44Z")
    }
}
