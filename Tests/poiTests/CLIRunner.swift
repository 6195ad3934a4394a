import Foundation

/// Runs the built `poi` executable, as a user would, and captures what it prints.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum CLI {
    /// A database with no records at `db`, made as a user would: `poi import` of an empty file beside it.
    @discardableResult static func emptyDatabase(at db: String) throws -> String {
        let empty = db + ".empty.jsonl"
        try Data().write(to: URL(fileURLWithPath: empty))
        let imported = try run(["import", empty, "--db", db])
        guard imported.status == 0 else { throw EmptyDatabaseError(database: db, stderr: imported.stderr) }
        return db
    }

    struct EmptyDatabaseError: Error, CustomStringConvertible {
        let database: String, stderr: String
        var description: String { "poi import of an empty file into \(database) failed: \(stderr)" }
    }

    /// The `poi` binary next to the test bundle (SwiftPM builds both into the same products directory).
    static let executable: URL = {
        if let override = ProcessInfo.processInfo.environment["POI_BIN"] { return URL(fileURLWithPath: override) }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // Swift Testing may run from inside an .xctest bundle directory on some platforms.
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("poi")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/poi")
    }()

    static func run(
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) throws -> CLIResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // Read both pipes concurrently with writing stdin, so large outputs cannot deadlock.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            outData = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }
}
