import Foundation
import HearthCore
import HearthCrypto

/// The command line: `hearth start|rules|cert`, `--help`, `--version`.
enum Commands {
    static let usage = """
    hearth \(Version.string) — Firebase Auth + Cloud Firestore + Amazon S3, offline, in one process.

    Usage:
      hearth start [flags]                      start every emulator (see hearth start --help)
      hearth rules check FILE                   check a Firestore rules file; exit 1 on errors
      hearth rules test FILE SUITE.json [--json]  run a Firebase Rules API TestSuite against FILE
      hearth rules bench FILE SUITE.json [--iterations N] [--json]
                                                compile FILE and time each decision of the suite in-process
      hearth export DIR [--data-dir D]          write a stopped hearth's data as JSON (start --import DIR loads it)
      hearth wait [--ready-file PATH] [--timeout S]  return once every listener of a started hearth answers
      hearth cert [--out-dir DIR] [--name NAME…]  make a self-signed localhost certificate for --tls-cert
      hearth --version | --help

    """

    static func main(_ args: [String]) -> Int32 {
        guard let command = args.first else {
            print(usage, terminator: "")
            return 0
        }
        let rest = Array(args.dropFirst())
        switch command {
        case "--help", "-h", "help":
            print(usage, terminator: "")
            return 0
        case "--version", "version":
            print("hearth \(Version.string)")
            return 0
        case "start":
            if rest.contains("--help") || rest.contains("-h") {
                print(startUsage(), terminator: "")
                return 0
            }
            do {
                let options = try StartOptions.parse(rest)
                return StartCommand.run(options)
            } catch {
                StartCommand.fail("\(error)")
                return 2
            }
        case "rules":
            return RulesCommand.run(rest)
        case "cert":
            return CertCommand.run(rest)
        case "wait":
            return WaitCommand.run(rest)
        case "export":
            return ExportCommand.run(rest)
        default:
            StartCommand.fail("unknown command '\(command)' (see hearth --help)")
            return 2
        }
    }

    static func startUsage() -> String {
        var s = "Usage: hearth start [flags]\n\nStarts the hub, Auth, Firestore, S3 and uploads API listeners; prints their URLs and the\nenvironment a client needs, and writes the same as JSON to the ready file.\n\nFlags:\n"
        for f in StartOptions.flags {
            let left = "  \(f.name)\(f.value.map { " \($0)" } ?? "")"
            s += left.padding(toLength: max(30, left.count + 2), withPad: " ", startingAt: 0) + f.help + "\n"
        }
        s += "\nA firebase.json in the working directory sets emulators.auth.port, emulators.firestore.port and firestore.rules.\n"
        return s
    }
}

/// `hearth cert`: a self-signed certificate for `--tls-cert`/`--tls-key`.
enum CertCommand {
    static func run(_ args: [String]) -> Int32 {
        var outDir = "."
        var names = ["localhost", "127.0.0.1", "::1"]
        var custom: [String] = []
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--help", "-h":
                print("Usage: hearth cert [--out-dir DIR] [--name NAME]…\nWrites hearth-cert.pem and hearth-key.pem (RSA 2048, SHA-256, extendedKeyUsage serverAuth, valid 825 days: what iOS requires) for localhost, 127.0.0.1, ::1 and any --name (e.g. your Mac's LAN address for a phone).")
                return 0
            case "--out-dir":
                guard i + 1 < args.count else { StartCommand.fail("--out-dir needs a value"); return 2 }
                outDir = args[i + 1]
                i += 2
            case "--name":
                guard i + 1 < args.count else { StartCommand.fail("--name needs a value"); return 2 }
                custom.append(args[i + 1])
                i += 2
            default:
                StartCommand.fail("unknown flag '\(args[i])' for hearth cert")
                return 2
            }
        }
        names += custom
        let san = names.map { n -> String in
            n.contains(":") || n.allSatisfy({ $0.isNumber || $0 == "." }) ? "IP:\(n)" : "DNS:\(n)"
        }
        do {
            let key = try RSAKey.generate(bits: 2048)
            let cert = try key.selfSignedCertificatePEM(commonName: "localhost", subjectAltNames: san,
                                                        notBefore: Int64(Date().timeIntervalSince1970) - 60,
                                                        validSeconds: 825 * 86_400, serial: Int(Date().timeIntervalSince1970))
            let certPath = (outDir as NSString).appendingPathComponent("hearth-cert.pem")
            let keyPath = (outDir as NSString).appendingPathComponent("hearth-key.pem")
            try Data(cert.utf8).write(to: URL(fileURLWithPath: certPath))
            try Data(try key.privateKeyPEM().utf8).write(to: URL(fileURLWithPath: keyPath))
            chmod(keyPath, 0o600)
            print("wrote \(certPath) and \(keyPath)\nstart with: hearth start --tls-cert \(certPath) --tls-key \(keyPath)")
            return 0
        } catch {
            StartCommand.fail("cannot make certificate: \(error)")
            return 1
        }
    }
}
