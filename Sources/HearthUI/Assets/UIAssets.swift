// The table of the UI's files; each lives in `UIAssets+<name>.swift` as a raw string literal.

/// The UI's files, compiled into the binary (SwiftPM resources would live beside it, not in it).
enum UIAssets {
    struct File: Sendable {
        let contentType: String
        let text: String
    }

    /// By file name, as served under `/ui/`.
    static let files: [String: File] = [
        "api.js": File(contentType: "text/javascript; charset=utf-8", text: apiJS),
        "app.css": File(contentType: "text/css; charset=utf-8", text: appCSS),
        "app.js": File(contentType: "text/javascript; charset=utf-8", text: appJS),
        "auth.js": File(contentType: "text/javascript; charset=utf-8", text: authJS),
        "clock.js": File(contentType: "text/javascript; charset=utf-8", text: clockJS),
        "dom.js": File(contentType: "text/javascript; charset=utf-8", text: domJS),
        "favicon.svg": File(contentType: "image/svg+xml", text: faviconSVG),
        "firestore.js": File(contentType: "text/javascript; charset=utf-8", text: firestoreJS),
        "index.html": File(contentType: "text/html; charset=utf-8", text: indexHTML),
        "overview.js": File(contentType: "text/javascript; charset=utf-8", text: overviewJS),
        "requests.js": File(contentType: "text/javascript; charset=utf-8", text: requestsJS),
        "rules.js": File(contentType: "text/javascript; charset=utf-8", text: rulesJS),
        "s3.js": File(contentType: "text/javascript; charset=utf-8", text: s3JS),
    ]
}
