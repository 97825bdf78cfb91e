import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct CORSServiceTests {
    @Test func preflightAllowsTheRequestedHeaders() throws {
        let f = try Fixture()
        let r = f.send("OPTIONS", "/v1/uploads/presign", token: nil, headers: [
            ("Origin", "http://localhost:5173"),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "authorization, content-type, x-firebase-appcheck"),
        ])
        #expect(r.status == 204)
        #expect(r.headers["Access-Control-Allow-Origin"] == "http://localhost:5173")
        #expect(r.headers["Access-Control-Allow-Methods"]?.contains("POST") == true)
        #expect(r.headers["Access-Control-Allow-Headers"] == "authorization, content-type, x-firebase-appcheck")
        #expect(r.headers["Access-Control-Max-Age"] != nil)
        #expect(r.headers.values("Vary").contains("Origin"))
    }

    @Test func preflightNeedsNoToken() throws {
        let f = try Fixture(configuration: UploadsConfiguration(requireAppCheck: true))
        let r = f.send("OPTIONS", "/v1/files/x/complete", token: nil, headers: [("Origin", "https://app.example")])
        #expect(r.status == 204)
        #expect(r.headers["Access-Control-Allow-Headers"] == CORSService.defaultAllowedHeaders)
    }

    @Test func everyResponseCarriesTheOrigin() throws {
        let f = try Fixture()
        let ok = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                        headers: [("Origin", "https://app.example")])
        #expect(ok.headers["Access-Control-Allow-Origin"] == "https://app.example")
        let err = f.send("POST", "/v1/uploads/presign", token: nil, json: "{}", headers: [("Origin", "https://app.example")])
        #expect(err.status == 401)
        #expect(err.headers["Access-Control-Allow-Origin"] == "https://app.example")
        let plain = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(plain.headers["Access-Control-Allow-Origin"] == "*")
    }

    @Test func unknownPathsAndMethodsAreJSONErrors() throws {
        let f = try Fixture()
        let missing = f.send("POST", "/v1/nothing")
        #expect(missing.status == 404)
        #expect(missing.reason == "NO_ROUTE")
        let wrongMethod = f.send("GET", "/v1/uploads/presign")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "POST, OPTIONS")
        #expect(wrongMethod.reason == "METHOD_NOT_ALLOWED")
        #expect(f.send("GET", "/", token: nil).json["service"] == .string("hearth uploads API"))
    }

    @Test func oversizedBodiesAre413() throws {
        let f = try Fixture()
        let big = #"{"contentType": "image/png", "fileExt": "png", "pad": ""# + String(repeating: "x", count: 70_000) + "\"}"
        let r = f.send("POST", "/v1/uploads/presign", json: big, headers: [("Origin", "https://a.example")])
        #expect(r.status == 413)
        #expect(r.reason == "BODY_TOO_LARGE")
        #expect(r.headers["Access-Control-Allow-Origin"] == "https://a.example")
    }
}
