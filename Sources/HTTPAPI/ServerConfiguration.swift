/// How `poi serve` runs.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Writes need `Authorization: Bearer <key>` when set.
    public var apiKey: String?
    /// Largest accepted request body.
    public var maximumBodySize: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, apiKey: String? = nil, maximumBodySize: Int = 1 << 20) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
        self.maximumBodySize = maximumBodySize
    }

    /// Whether the server only listens on this machine.
    public var isLoopback: Bool {
        host == "127.0.0.1" || host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The rule of DESIGN.md §4: without an API key the server only accepts writes on loopback, and refuses to
    /// start on another address.
    public func validate() throws(ServerConfigurationError) {
        guard (1...65_535).contains(port) else { throw .invalid("--port must be between 1 and 65535") }
        if apiKey == nil && !isLoopback {
            throw .invalid("refusing to listen on \(host) without an API key: pass --api-key or set POI_API_KEY")
        }
        if let apiKey, apiKey.count < 8 { throw .invalid("the API key must be at least 8 characters") }
    }
}

public enum ServerConfigurationError: Error, CustomStringConvertible {
    case invalid(String)

    public var description: String {
        switch self {
        case .invalid(let message): return message
        }
    }
}
