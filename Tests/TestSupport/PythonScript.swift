import Foundation

/// Runs a command-line tool the tests compare the product with (python3, osmium), found on the PATH.
public enum Tool {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The tool's standard output. - Throws: `Failure` with its standard error when it exits non-zero.
    public static func run(_ command: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes before waiting, so that a large output never blocks the tool.
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(command) \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Runs a Python script of the repository (scripts/...) with python3 from the repository root: an independent
/// implementation (pyosmium, say) that a test compares the product with.
public enum PythonScript {
    /// The repository root.
    public static let repository = Repository.root

    public typealias Failure = Tool.Failure

    /// The script's standard output. - Throws: `Failure` with its standard error when it exits non-zero.
    public static func run(_ arguments: [String]) throws -> String {
        try Tool.run("python3", arguments, in: repository)
    }
}
