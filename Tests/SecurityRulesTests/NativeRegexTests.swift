import Foundation
import Testing
@testable import SecurityRules

/// NativeRegex must answer every full match exactly as the ICU path did for the patterns it takes
/// (inputs without "\r" and Unicode line separators, where RE2 and ICU line rules agree).
struct NativeRegexTests {
    static let patterns = [
        "users/[^/]+/uploads/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}[.][A-Za-z0-9]{1,16}",
        "(?sm).*(^http|x-amz-signature).*", "^[A-Za-z0-9_-]{1,64}$", "a*b+c?", "(ab|cd)*e", "x{2,}", "x{2}y{0,1}",
        "[a-c-]+", "[]a]+", "[^\\d\\s]*", "\\w+@\\w+\\.com", ".*", ".+", "(?s).+", "(?m)^a$", "^a$", "a|", "(?:)",
        "(?P<n>ab)+", "(?<n>x)?y", "\\x41\\x{42}", "a.c", "é+ü", "[à-ÿ]+", "\\.\\*\\+", "a{,2}", "{", "a{1,3}?b",
        "(a|ab)(c|bcd)(d*)", "((a*)*|b)*c", "\\Aab\\z", "[\\D]", "[\\W-]+", "(?s:.)\\n", "(?m)a$\\n^b",
    ]
    static let inputs = [
        "", "a", "b", "ab", "abc", "aabbc", "abcde", "cde", "ababe", "e", "xx", "xxx", "xxy", "x", "-abc-", "]a]",
        "users/u1/uploads/0f8fad5b-d9cb-469f-a165-70867728950e.jpg", "users/u1/x/uploads/0f8fad5b-d9cb-469f-a165-70867728950e.jpg",
        "pending\nhttp://x", "users/a\nHTTPS", "ok\nfine x-amz-signature=1", "plain text", "abc_DEF-123", "a b",
        "me@host.com", "a\nb", "a\n", "\n", "éüü", "àÿ", ".*+", "a{,2}", "{", "ab", "abb", "abcd", "abbcd", "aaac", "bbc",
        "AB", "4", " ", "x-", "a\nbc",
    ]

    @Test func agreesWithICU() throws {
        for pattern in Self.patterns {
            let native = NativeRegex.compile(pattern)
            guard case .success(let icuPattern) = RE2Translator.translate(pattern),
                  let icu = try? NSRegularExpression(pattern: "\\A(?:" + icuPattern + ")\\z") else {
                #expect(native == nil, "native took a pattern ICU rejects: \(pattern)")
                continue
            }
            let reference = CompiledRegex(icu)
            for input in Self.inputs {
                #expect(native?.fullMatch(input) ?? reference.fullMatch(input) == reference.fullMatch(input),
                        "\(pattern) on \(input.debugDescription)")
            }
        }
    }

    @Test func shippedPatternsRunNatively() {
        for pattern in Self.patterns.prefix(3) { #expect(NativeRegex.compile(pattern) != nil, "\(pattern)") }
    }

    @Test(arguments: ["(?i)abc", "\\bword\\b", "\\pL+", "[[:alpha:]]+", "\\Qa.b\\E", "a{1001}", "(a", "a)", "[a", "*a"])
    func unsupportedOrInvalidFallsBack(_ pattern: String) {
        #expect(NativeRegex.compile(pattern) == nil)
    }

    @Test func lineRulesAreRE2s() {
        // RE2: `.` excludes only "\n"; ICU also excluded "\r" before this matcher.
        #expect(probe("'a\\rb'.matches('a.b')") == .bool(true))
        #expect(probe("'a\\nb'.matches('a.b')") == .bool(false))
        #expect(probe("'a\\nb'.matches('(?s)a.b')") == .bool(true))
        #expect(probe("'x\\nhttp'.matches('(?sm).*^http')") == .bool(true))
        #expect(probe("'xhttp'.matches('(?sm).*^http')") == .bool(false))
    }

    @Test func longAndNonASCIIInputs() {
        let re = NativeRegex.compile("(?sm).*(^http|x-amz-signature).*")
        #expect(re?.fullMatch(String(repeating: "é✓ ", count: 5000) + "X-Amz-Signature".lowercased()) == true)
        #expect(re?.fullMatch(String(repeating: "é✓ ", count: 5000)) == false)
    }

    @Test func concurrentUseIsSafe() async {
        let re = NativeRegex.compile("[a-z]+[0-9]{2,4}")
        await withTaskGroup(of: Bool.self) { group in
            for i in 0..<8 {
                group.addTask { (0..<200).allSatisfy { k in re?.fullMatch("abc\(1000 + i * 10 + k % 7)") == true } }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
