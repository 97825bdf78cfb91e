import Foundation
import HearthCore

// The executable only parses the command line and hands over; see Commands.swift.
// A reader that went away (stdout piped into a process that exited) must not kill the server.
StandardStream.ignoreBrokenPipes()
exit(Commands.main(Array(CommandLine.arguments.dropFirst())))
