import Testing
@testable import UploadsAPI

@Suite struct ContentTypePolicyTests {
    let policy = ContentTypePolicy(UploadsConfiguration.defaultContentTypes)

    @Test(arguments: [
        ("image/jpeg", "image/jpeg"),
        ("  image/png\t", "image/png"),
        ("IMAGE/GIF", "IMAGE/GIF"),
        ("application/pdf;version=1.7", "application/pdf;version=1.7"),
    ])
    func allowedTypesAreSignedAsGivenButTrimmed(_ raw: String, _ signed: String) throws {
        #expect(try policy.check(raw) == signed)
    }

    @Test(arguments: ["text/plain", "image", "image/", "/png", "image/png/x", "image/p ng", "image/png\u{7F}", "image/png\n"])
    func otherTypesAreRefused(_ raw: String) {
        #expect(throws: UploadsError.contentTypeNotAllowed(raw, allowed: UploadsConfiguration.defaultContentTypes)) {
            try policy.check(raw)
        }
    }
}
