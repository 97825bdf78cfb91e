import Foundation

// The executable only parses the command line and hands over; see Commands.swift.
exit(Commands.main(Array(CommandLine.arguments.dropFirst())))
