/// The arguments of a small command (`hearth wait`, `hearth export`): `--flag value` pairs and
/// plain words, with `--help` and every usage error answered in one place.
struct CommandArguments {
    /// The value of each flag given (the last one wins).
    var values: [String: String] = [:]
    /// The words that are not flags or their values, in order.
    var words: [String] = []

    /// Parses `args`, accepting `flags` (each takes a value). Returns nil after printing the usage
    /// (`exitStatus` 0) or a one-line error (`exitStatus` 2).
    static func parse(_ args: [String], command: String, flags: Set<String>, usage: String, exitStatus: inout Int32) -> CommandArguments? {
        var parsed = CommandArguments()
        var i = 0
        while i < args.count {
            let arg = args[i]
            if arg == "--help" || arg == "-h" {
                print(usage, terminator: "")
                exitStatus = 0
                return nil
            }
            if flags.contains(arg) {
                guard i + 1 < args.count else {
                    StartCommand.fail("\(arg) needs a value")
                    exitStatus = 2
                    return nil
                }
                parsed.values[arg] = args[i + 1]
                i += 2
            } else if arg.hasPrefix("-") {
                StartCommand.fail("unknown flag '\(arg)' for hearth \(command) (see hearth \(command) --help)")
                exitStatus = 2
                return nil
            } else {
                parsed.words.append(arg)
                i += 1
            }
        }
        return parsed
    }
}
