import ArgumentParser
import Foundation

/// The `poi` command: a thin argument-parsing layer over the libraries.
struct Poi: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poi",
        abstract: "Geospatial POI search: nearby, keyword, bbox/polygon, geocoding and coordinate conversion.",
        subcommands: [
            ServeCommand.self, NearbyCommand.self, SearchCommand.self, WithinCommand.self, ClustersCommand.self, GeocodeCommand.self, ReverseCommand.self,
            ConvertCommand.self, ImportCommand.self, GenerateCommand.self, BenchCommand.self,
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
            command = try Poi.parseAsRoot()
        } catch {
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
