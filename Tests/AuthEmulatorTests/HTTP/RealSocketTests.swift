import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

/// The service behind a real `HTTPServer` on a free port, spoken to over TCP.
@Suite struct RealSocketTests {
    struct Running {
        let harness: AuthHarness
        let server: HTTPServer
        var base: String { server.url }
    }

    func start(signing: AuthConfiguration.TokenSigning = .none) throws -> Running {
        let h = try AuthHarness(signing: signing)
        let server = HTTPServer(name: "auth-test", configuration: .init(host: "127.0.0.1", port: 0, threads: 2), service: h.service.http)
        try server.start()
        return Running(harness: h, server: server)
    }

    func call(_ url: String, method: String = "POST", json: String? = nil, form: String? = nil,
              headers: [String: String] = [:]) async throws -> (status: Int, body: JSON, headers: [AnyHashable: Any]) {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let form {
            request.httpBody = Data(form.utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, (try? JSON.parse(data)) ?? .null, http.allHeaderFields)
    }

    @Test func signUpSignInRefreshOverTCP() async throws {
        let r = try start()
        defer { r.server.stop(graceSeconds: 0) }
        let up = try await call("\(r.base)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                                json: #"{"email":"tcp@b.com","password":"secret123","returnSecureToken":true}"#)
        #expect(up.status == 200)
        let signIn = try await call("\(r.base)/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                                    json: #"{"email":"tcp@b.com","password":"secret123"}"#, headers: ["Origin": "http://localhost:3000"])
        #expect(signIn.body["localId"] == up.body["localId"])
        #expect(signIn.headers["Access-Control-Allow-Origin"] as? String == "http://localhost:3000")
        let refresh = try await call("\(r.base)/securetoken.googleapis.com/v1/token?key=k",
                                     form: "grant_type=refresh_token&refresh_token=\(up.body["refreshToken"]?.stringValue ?? "")")
        #expect(refresh.status == 200)
        #expect(refresh.body["user_id"] == up.body["localId"])
        let bad = try await call("\(r.base)/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", json: "{nope")
        #expect(bad.status == 400)
        #expect(bad.body["error"]?["status"] == "INVALID_ARGUMENT")
    }

    @Test func publishedKeysOverTCP() async throws {
        let r = try start(signing: .rs256)
        defer { r.server.stop(graceSeconds: 0) }
        let certs = try await call("\(r.base)\(AuthRoutes.x509Path)", method: "GET")
        #expect(certs.status == 200)
        #expect(certs.body.objectValue?.count == 1)
        #expect((certs.headers["Cache-Control"] as? String)?.contains("max-age=3600") == true)
        let admin = try await call("\(r.base)/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:batchGet?maxResults=5",
                                   method: "GET", headers: ["Authorization": "Bearer owner"])
        #expect(admin.body["kind"] == "identitytoolkit#DownloadAccountResponse")
        let preflight = try await call("\(r.base)/identitytoolkit.googleapis.com/v1/accounts:lookup", method: "OPTIONS",
                                       headers: ["Origin": "http://app.test", "Access-Control-Request-Method": "POST"])
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Origin"] as? String == "http://app.test")
    }
}
