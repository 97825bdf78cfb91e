import Foundation
import HearthCore
import Testing
@testable import SecurityRules

struct RulesTestRunnerTests {
    static let suites = ["files-create", "files-read", "files-update", "files-delete"]

    @Test(arguments: suites)
    func shippedSuitePasses(_ name: String) throws {
        let source = Fixtures.read(Fixtures.repoRoot.appendingPathComponent("rules/firestore.rules"))
        let suite = try JSON.parse(Fixtures.read(Fixtures.repoRoot.appendingPathComponent("rules/tests/\(name).json")))
        let (out, status) = RulesCommandLine.test(source: source, fileName: "firestore.rules",
                                                  suiteJSON: suite.serialized(), json: false)
        #expect(status == 0, "\(out)")
        #expect(!out.contains("FAIL"), "\(out)")
    }
}
