import GeoCore

/// A failure a command reports with a one-line message and an exit status (1 failure or no result, 2 bad usage).
struct CLIError: Error {
    let message: String
    let status: Int32

    static func usage(_ message: String) -> CLIError { CLIError(message: message, status: 2) }
    static func failure(_ message: String) -> CLIError { CLIError(message: message, status: 1) }

    /// Bad input to a library call is bad usage.
    static func usage(_ error: GeoError) -> CLIError { CLIError(message: error.description, status: 2) }
}
