import ArgumentParser
import Foundation
import GeoCore

/// The `poi` command: a thin argument-parsing layer over the libraries.
struct Poi: AsyncParsableCommand {
    static let version = "0.12.0"

    static let configuration = CommandConfiguration(
        commandName: "poi",
        abstract: "Geospatial POI search: nearby, keyword, bbox/polygon, geocoding and coordinate conversion.",
        version: Poi.version,
        subcommands: [
            ServeCommand.self, NearbyCommand.self, SearchCommand.self, WithinCommand.self, ClustersCommand.self, GeocodeCommand.self,
            SuggestCommand.self,
            ReverseCommand.self,
            ConvertCommand.self, ImportCommand.self, GenerateCommand.self, BenchCommand.self, KeysCommand.self, BackupCommand.self,
            RestoreCommand.self, ReplicateCommand.self,
        ]
    )
}

/// Runs the root command with the project's exit statuses: 0 ok, 1 no result or failure, 2 bad usage,
/// each failure with a one-line message on standard error.
@main
enum PoiMain {
    static func main() async {
        let command: any ParsableCommand
        do {
            let arguments = try CommandLineArguments.normalized(Array(CommandLine.arguments.dropFirst()))
            command = try Poi.parseAsRoot(arguments)
        } catch let error as CLIError {
            fail(error.message, status: error.status)
        } catch {
            if let suggestion = CommandLineArguments.suggestion(for: Array(CommandLine.arguments.dropFirst())) { fail(suggestion, status: 2) }
            exitForParseError(error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
            exit(0)
        } catch let error as CLIError {
            fail(error.message, status: error.status)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch {
            let code = Poi.exitCode(for: error)
            if code == .success {
                print(Poi.fullMessage(for: error))
                exit(0)
            }
            fail(Poi.message(for: error), status: code == .validationFailure ? 2 : 1)
        }
    }

    private static func exitForParseError(_ error: any Error) -> Never {
        let code = Poi.exitCode(for: error)
        if code == .success {
            print(Poi.fullMessage(for: error))
            exit(0)
        }
        fail(Poi.message(for: error), status: 2)
    }

    static func fail(_ message: String, status: Int32) -> Never {
        let line = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
        FileHandle.standardError.write(Data("poi: \(line)\n".utf8))
        exit(status)
    }
}

/// What swift-argument-parser does not do for a geospatial CLI.
enum CommandLineArguments {
    /// Options whose values are numbers or lists of numbers, checked here as strict decimals.
    static let numericOptions: Set<String> = ["--lat", "--lon", "--radius"]

    /// `--lon -122.08`, `--bbox -180,-90,180,90`, `--near -22.9,-43.2`: a value that starts with "-" and a digit (or
    /// "-.") is a value, not an option — the parser would otherwise take it for an unknown option and report the
    /// option before it as missing its value. Rewritten as `--lon=-122.08`. No poi option begins with a digit.
    /// Numeric options are checked as decimals (`0x10`, `inf` and `nan` are refused, as over HTTP).
    static func normalized(_ arguments: [String]) throws(CLIError) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            var name: String?
            var value: String?
            if argument.hasPrefix("--"), !argument.contains("="), index + 1 < arguments.count, looksNegative(arguments[index + 1]) {
                name = argument
                value = arguments[index + 1]
                result.append(argument + "=" + arguments[index + 1])
                index += 2
            } else {
                if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    value = String(argument[argument.index(after: equals)...])
                } else if argument.hasPrefix("--"), index + 1 < arguments.count {
                    name = argument
                    value = arguments[index + 1]
                }
                result.append(argument)
                index += 1
            }
            if let name, let value, numericOptions.contains(name), DecimalNumber.parse(value.trimmingCharacters(in: .whitespaces)) == nil {
                throw CLIError.usage("\(name) must be a decimal number (got \"\(value.prefix(40))\")")
            }
        }
        return result
    }

    private static func looksNegative(_ text: String) -> Bool {
        guard text.hasPrefix("-"), let next = text.dropFirst().first else { return false }
        return next.isASCII && (next.isNumber || next == ".")
    }

    /// "unknown command 'serach'; did you mean 'search'?" when the first argument is close to a command's name.
    static func suggestion(for arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = Poi.configuration.subcommands.compactMap { $0.configuration.commandName }
        guard !names.contains(first) else { return nil }
        let ranked = names.map { ($0, editDistance(first.lowercased(), $0)) }.min { $0.1 < $1.1 }
        guard let (name, distance) = ranked, distance <= max(2, name.count / 3) else {
            return "unknown command '\(first)'; the commands are \(names.joined(separator: ", "))"
        }
        return "unknown command '\(first)'; did you mean '\(name)'?"
    }

    /// Optimal string alignment distance (adjacent transpositions count as one edit).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }
}
