import Access
import ArgumentParser
import Foundation

/// API keys for the keys file of `poi serve --keys-file`.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make API keys for --keys-file.",
        subcommands: [New.self, Hash.self]
    )

    /// A new random key: the key on standard output (give it to the operator or service), and the entry for the
    /// keys file, which holds only its hash, on standard error.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new random key, and its keys-file entry on standard error.")

        @Option(help: "The key's name in logs and messages.") var name: String
        @Option(parsing: .upToNextOption, help: "Its scopes: admin, import, pois:write, pins:write, fences.") var scope: [String] = []

        func run() throws {
            let scopes = try KeysCommand.scopes(scope)
            var bytes = [UInt8](repeating: 0, count: 32)
            var generator = SystemRandomNumberGenerator()
            for i in bytes.indices { bytes[i] = generator.next() }
            let key =
                "poi_"
                + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            print(key)
            FileHandle.standardError.write(Data((KeysCommand.entry(name: name, key: key, scopes: scopes) + "\n").utf8))
        }
    }

    /// The keys-file entry of an existing key, read from standard input (so it stays out of the shell's history).
    struct Hash: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the keys-file entry of a key read from standard input.")

        @Option(help: "The key's name in logs and messages.") var name: String
        @Option(parsing: .upToNextOption, help: "Its scopes: admin, import, pois:write, pins:write, fences.") var scope: [String] = []

        func run() throws {
            let scopes = try KeysCommand.scopes(scope)
            guard let line = readLine(strippingNewline: true), line.count >= 8 else {
                throw CLIError.usage("standard input must hold the key (8 characters or more)")
            }
            print(KeysCommand.entry(name: name, key: line, scopes: scopes))
        }
    }

    static func scopes(_ names: [String]) throws -> [Scope] {
        guard !names.isEmpty else { throw CLIError.usage("--scope must name at least one of admin, import, pois:write, pins:write, fences") }
        return try names.map { name in
            guard let scope = Scope(rawValue: name) else {
                throw CLIError.usage("--scope: unknown scope \"\(name)\" (admin, import, pois:write, pins:write, fences)")
            }
            return scope
        }
    }

    static func entry(name: String, key: String, scopes: [Scope]) -> String {
        let object: [String: Any] = ["name": name, "sha256": KeyRing.hash(key), "scopes": scopes.map(\.rawValue)]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
