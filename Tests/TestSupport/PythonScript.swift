import Foundation

/// Runs a command-line tool the tests compare the product with (python3, osmium), found on the PATH.
public enum Tool {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The tool's standard output. - Throws: `Failure` with its standard error when it exits non-zero.
    ///
    /// Both streams go to temporary files, read once the tool has exited: the whole output, whatever the test
    /// process's other threads do to pipes and signals meanwhile (read from a pipe, a fresh-clone run once got
    /// only the first 8 KB of a script's 22 KB).
    public static func run(_ command: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("poi-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? out.close()
            try? err.close()
            throw error
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        let data = try Data(contentsOf: outURL)
        let errors = try Data(contentsOf: errURL)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(
                description:
                    "\(command) \(arguments.joined(separator: " ")) failed (\(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))"
            )
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
