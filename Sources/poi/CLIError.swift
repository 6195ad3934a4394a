import API
import GeoCore

/// A failure a command reports with a one-line message and an exit status (1 failure or no result, 2 bad usage).
struct CLIError: Error, CustomStringConvertible {
    let message: String
    let status: Int32

    var description: String { message }

    static func usage(_ message: String) -> CLIError { CLIError(message: message, status: 2) }
    static func failure(_ message: String) -> CLIError { CLIError(message: message, status: 1) }

    /// Bad input to a library call is bad usage.
    static func usage(_ error: GeoError) -> CLIError { CLIError(message: error.description, status: 2) }
}

extension CLIError {
    /// A parameter the wire layer refused, named as the command's option (`lat` → `--lat`; `options` renames the
    /// ones that are spelled otherwise on this command, such as search's keywords argument).
    static func usage(_ error: ParameterError, options: [String: String] = [:]) -> CLIError {
        .usage("\(options[error.parameter] ?? "--" + error.parameter) \(error.rule)")
    }
}
