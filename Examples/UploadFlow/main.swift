// hearth-upload-flow: the seed app's upload flow against a running Hearth, step by step, as an app
// would run it (it works on Linux and macOS alike). Everything goes through HearthClient, which speaks
// the real REST shapes.
//
//   hearth start &                                   # or: make run
//   swift run hearth-upload-flow                     # default ports on 127.0.0.1
//   swift run hearth-upload-flow --ready-file emulator-data/hearth.ready.json --failures
//
// Flags: --ready-file PATH (or $HEARTH_READY), --host ADDR, --auth-url/--firestore-url/--api-url/--hub-url/--s3-url URL,
// --project ID, --email E, --password P, --failures (also demonstrate the classic failure modes).
import Foundation
import HearthClient

struct Options {
    var readyFile = ProcessInfo.processInfo.environment["HEARTH_READY"]
    var host = "127.0.0.1"
    var urls: [String: String] = [:]
    var project = ProcessInfo.processInfo.environment["GCLOUD_PROJECT"] ?? "demo-hearth"
    var email: String?
    var password = "correct-horse-battery"
    var failures = false
    var readyFileExplicit = false

    static func parse(_ args: [String]) -> Options {
        var o = Options()
        var i = 0
        func value() -> String {
            guard i + 1 < args.count else { fail("\(args[i]) needs a value") }
            i += 1
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--ready-file":
                o.readyFile = value()
                o.readyFileExplicit = true
            case "--host": o.host = value()
            case "--auth-url": o.urls["auth"] = value()
            case "--firestore-url": o.urls["firestore"] = value()
            case "--api-url": o.urls["api"] = value()
            case "--hub-url": o.urls["hub"] = value()
            case "--s3-url": o.urls["s3"] = value()
            case "--project": o.project = value()
            case "--email": o.email = value()
            case "--password": o.password = value()
            case "--failures": o.failures = true
            case "--help", "-h":
                print("usage: hearth-upload-flow [--ready-file PATH] [--host ADDR] [--{auth,firestore,api,hub,s3}-url URL] [--project ID] [--email E --password P] [--failures]")
                exit(0)
            default: fail("unknown argument \(args[i]) (see --help)")
            }
            i += 1
        }
        return o
    }

    func instance() throws -> HearthInstance {
        if let readyFile, urls.isEmpty, readyFileExplicit || FileManager.default.fileExists(atPath: readyFile) {
            return try HearthInstance(readyFile: readyFile)
        }
        // Hearth's default ports.
        func url(_ name: String, _ port: Int) throws -> URL {
            let text = urls[name] ?? "http://\(host):\(port)"
            guard let u = URL(string: text) else { throw HearthClientError.invalidArgument("bad URL \(text)") }
            return u
        }
        return HearthInstance(hub: try url("hub", 4400), auth: try url("auth", 9099), firestore: try url("firestore", 8080),
                              s3: try url("s3", 9000), api: try url("api", 8000), projectID: project)
    }
}

/// The file document the seed app writes (the shipped rules' shape).
struct FileMetadata: Codable {
    var ownerUid: String
    var storage = "s3"
    var s3Key: String
    var contentType: String
    var status = "ready"
    var size: Int?
    @ServerTimestamp var createdAt: Date?
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("hearth-upload-flow: \(message)\n".utf8))
    exit(1)
}

/// Writes a line at once (unbuffered), so each step shows up as it happens even when piped.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

@MainActor enum Steps { static var count = 0 }
@MainActor func step(_ title: String) {
    Steps.count += 1
    say("\n[\(Steps.count)] \(title)")
}
func detail(_ text: String) {
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) { say("    \(line)") }
}

/// Runs `body`, which must fail; prints what the server said.
func expectFailure(_ what: String, _ body: () async throws -> Void) async throws {
    do {
        try await body()
        fail("\(what) unexpectedly succeeded")
    } catch let e as HearthClientError {
        detail("refused as expected: \(e)")
        if case .s3(let s3) = e, let cr = s3.canonicalRequest {
            detail("server's canonical request:")
            for line in cr.split(separator: "\n", omittingEmptySubsequences: false) { detail("  | \(line)") }
        }
    }
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
do {
    let hearth = try options.instance()
    let auth = try hearth.auth()
    let email = options.email ?? "demo-\(FirestoreClient.autoID().prefix(8).lowercased())@example.com"

    step("Sign up \(email) (Identity Toolkit accounts:signUp)")
    let session: AuthSession
    do {
        session = try await auth.signUp(email: email, password: options.password)
    } catch let e as HearthClientError {
        guard case .api(let api) = e, api.authErrorCode == "EMAIL_EXISTS" else { throw e }
        detail("already exists; signing in instead")
        session = try await auth.signIn(email: email, password: options.password)
    }
    detail("uid \(session.uid); ID token valid \(session.expiresIn) s")
    let uploads = try hearth.uploads(token: session.bearer)
    let firestore = try hearth.firestore(token: session.bearer)
    let bytes = Data("Hello from hearth-upload-flow at \(Date())\n".utf8)

    step("Presign an upload (POST /v1/uploads/presign)")
    let presigned = try await uploads.presign(contentType: "image/jpeg", fileExt: "jpg", expiresSeconds: 900)
    detail("key  \(presigned.key)")
    detail("PUT  \(presigned.putUrl.prefix(100))…")
    detail("must send Content-Type: \(presigned.contentType ?? "-")")

    step("PUT \(bytes.count) bytes to S3 with the signed Content-Type")
    let receipt = try await uploads.upload(bytes, to: presigned)
    detail("ETag \(receipt.etag ?? "-")")

    step("Record the key in Firestore from the client (users/{uid}/files/{autoId})")
    let ref = try await firestore.add(FileMetadata(ownerUid: session.uid, s3Key: presigned.key, contentType: "image/jpeg", size: bytes.count),
                                      to: "users/\(session.uid)/files")
    detail("wrote \(ref.path) (createdAt = server timestamp, as the rules require)")

    step("Read the document back")
    guard let stored = try await firestore.get(FileMetadata.self, at: ref.path) else { fail("document \(ref.path) is missing") }
    detail("s3Key \(stored.s3Key), size \(stored.size ?? -1), createdAt \(stored.createdAt.map { Timestamp(date: $0).rfc3339 } ?? "-")")

    step("Presign a download (POST /v1/files/presign-download) and GET it")
    let download = try await uploads.presignDownload(s3Key: stored.s3Key)
    let fetched = try await uploads.download(download)
    guard fetched == bytes else { fail("downloaded bytes differ from the uploaded ones") }
    detail("got the same \(fetched.count) bytes back")

    step("Server-side variant: presign, PUT, then POST /v1/files/{fileId}/complete")
    let second = try await uploads.presign(contentType: "application/pdf", fileExt: "pdf")
    try await uploads.upload(Data("%PDF-1.7\n%%EOF\n".utf8), to: second)
    let file = try await uploads.complete(fileID: FirestoreClient.autoID(), key: second.key, originalName: "demo.pdf")
    detail("server wrote \(file.path): \(file.contentType), \(file.size) bytes, status \(file.status), createdAt \(file.createdAt)")

    if options.failures {
        step("Failure: PUT with another Content-Type than was signed")
        let third = try await uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
        try await expectFailure("PUT with image/png") { try await uploads.upload(bytes, to: third, contentType: "image/png") }

        step("Failure: complete before the PUT")
        try await expectFailure("complete") { _ = try await uploads.complete(fileID: "early", key: third.key) }

        step("Failure: another user reads the file document and asks for the key")
        let other = try await auth.signUp(email: "other-\(FirestoreClient.autoID().prefix(8).lowercased())@example.com", password: options.password)
        try await expectFailure("other user's read") { _ = try await firestore.with(token: other.bearer).document(at: ref.path) }
        try await expectFailure("other user's presign-download") {
            _ = try await uploads.with(token: other.bearer).presignDownload(s3Key: presigned.key)
        }

        step("Failure: metadata that stores the presigned URL")
        try await expectFailure("URL as s3Key") {
            _ = try await firestore.add(FileMetadata(ownerUid: session.uid, s3Key: third.putUrl, contentType: "image/jpeg"),
                                        to: "users/\(session.uid)/files")
        }
    }
    say("\nDone: the whole flow ran against Hearth.")
} catch {
    fail("\(error)")
}
