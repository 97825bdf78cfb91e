import HearthCore
import HearthHTTP
import Testing
@testable import HearthUI

@Suite struct UIServiceTests {
    static func respond(_ service: UIService, _ req: Request) -> Response {
        switch service.dispose(req) {
        case .respond(let r): return r
        case .collect(_, _, let handler): return handler(req)
        case .collectDeferred(_, _, let handler): return DeferredAnswer.wait { handler(req, $0) }
        case .stream(let c): return c.finish()
        }
    }

    @Test func servesTheEmbeddedPageWithHeadersThatKeepItToItself() {
        let ui = UIService(mounts: [])
        let r = Self.respond(ui, Request(method: "GET", target: "/"))
        #expect(r.status == 200)
        #expect(r.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(r.headers["X-Frame-Options"] == "DENY")
        #expect(r.headers["Content-Security-Policy"]?.contains("connect-src 'self'") == true)
        #expect(String(decoding: r.bodyBytes ?? [], as: UTF8.self).contains("/ui/app.js"))
        #expect(Self.respond(ui, Request(method: "GET", target: "/ui/app.js")).headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(Self.respond(ui, Request(method: "GET", target: "/ui/nope.js")).status == 404)
    }

    @Test func everyModuleThePagesImportIsEmbedded() {
        for file in UIAssets.files.values where file.contentType.hasPrefix("text/javascript") {
            for match in file.text.matches(of: /from '\.\/([a-z0-9]+\.js)'/) {
                #expect(UIAssets.files[String(match.1)] != nil, "\(match.1) is imported but not embedded")
            }
        }
    }

    @Test func mountedServicesSeeTheirOwnPathHostAndBody() {
        let router = Router()
        router.post("/v1/echo") { req, _ in
            .json(.object(["host": .string(req.headers["Host"] ?? ""), "path": .string(req.rawPath),
                           "query": .string(req.rawQuery), "body": .string(req.bodyText)]))
        }
        let ui = UIService(mounts: [UIService.Mount(prefix: "firestore", service: router, host: "127.0.0.1:8080")])
        let req = Request(method: "POST", target: "/firestore/v1/echo?a=b", headers: ["Host": "localhost:4000"], body: Array("hi".utf8))
        let r = Self.respond(ui, req)
        let json = try! JSON.parse(r.bodyBytes ?? [])
        #expect(json["host"]?.stringValue == "127.0.0.1:8080")
        #expect(json["path"]?.stringValue == "/v1/echo")
        #expect(json["query"]?.stringValue == "a=b")
        #expect(json["body"]?.stringValue == "hi")
        #expect(Self.respond(ui, Request(method: "GET", target: "/firestorex/v1/echo")).status == 404)
    }
}
