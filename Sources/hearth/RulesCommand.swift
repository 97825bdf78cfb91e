import Foundation
import HearthCore
import SecurityRules

/// `hearth rules check|test`: the rules language from the command line.
enum RulesCommand {
    static let usage = """
    Usage:
      hearth rules check FILE                     syntax and semantic problems; exit 1 on any error
      hearth rules test FILE SUITE.json [--json]  run a Firebase Rules API TestSuite; exit 1 on any failure
      hearth rules bench FILE SUITE.json [--iterations N] [--json]
                                                  time compiling FILE and judging each case in process

    """

    static func run(_ args: [String]) -> Int32 {
        guard let sub = args.first, sub != "--help", sub != "-h" else {
            print(usage, terminator: "")
            return args.isEmpty ? 2 : 0
        }
        let rest = Array(args.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(usage, terminator: "")
            return 0
        }
        switch sub {
        case "check":
            guard rest.count == 1 else { return usageError("hearth rules check takes one FILE") }
            guard let source = read(rest[0]) else { return 2 }
            let (output, status) = RulesCommandLine.check(source: source, fileName: rest[0])
            emit(output)
            return status
        case "test":
            let json = rest.contains("--json")
            let files = rest.filter { $0 != "--json" }
            if let unknown = files.first(where: { $0.hasPrefix("--") }) { return usageError("unknown flag '\(unknown)'") }
            guard files.count == 2 else { return usageError("hearth rules test takes FILE and SUITE.json") }
            guard let source = read(files[0]), let suite = read(files[1]) else { return 2 }
            let (output, status) = RulesCommandLine.test(source: source, fileName: files[0], suiteJSON: suite, json: json)
            emit(output)
            return status
        case "bench":
            var iterations = 20_000
            var json = false
            var files: [String] = []
            var i = 0
            while i < rest.count {
                switch rest[i] {
                case "--json": json = true
                case "--iterations":
                    guard i + 1 < rest.count, let n = Int(rest[i + 1]), n > 0 else { return usageError("--iterations takes a positive number") }
                    iterations = n
                    i += 1
                case let flag where flag.hasPrefix("--"): return usageError("unknown flag '\(flag)'")
                default: files.append(rest[i])
                }
                i += 1
            }
            guard files.count == 2 else { return usageError("hearth rules bench takes FILE and SUITE.json") }
            guard let source = read(files[0]), let suite = read(files[1]) else { return 2 }
            let (output, status) = RulesCommandLine.bench(source: source, fileName: files[0], suiteJSON: suite,
                                                          iterations: iterations, json: json)
            emit(output)
            return status
        default:
            return usageError("unknown rules command '\(sub)'")
        }
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else {
            StartCommand.fail("cannot read \(path)")
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func emit(_ text: String) {
        guard !text.isEmpty else { return }
        StandardStream.write(text.hasSuffix("\n") ? text : text + "\n", to: StandardStream.output)
    }

    private static func usageError(_ message: String) -> Int32 {
        StartCommand.fail("\(message)\n\(usage)")
        return 2
    }
}
