import Access
import HTTPServer
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How `poi serve` runs.
public struct ServerConfiguration: Sendable {
    /// The PEM files of `--tls-cert` and `--tls-key`.
    public struct TLSFiles: Sendable {
        public var certificateChain: String
        public var privateKey: String

        public init(certificateChain: String, privateKey: String) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }

        /// The server's TLS context (TLS 1.2 and up), or which file is unusable and why.
        public func context() throws(ServerConfigurationError) -> NIOSSLContext {
            let chain: [NIOSSLCertificate]
            do { chain = try NIOSSLCertificate.fromPEMFile(certificateChain) } catch {
                throw .invalid("--tls-cert \(certificateChain): not a readable PEM certificate chain (\(error))")
            }
            guard !chain.isEmpty else { throw .invalid("--tls-cert \(certificateChain): no certificate in the file") }
            let key: NIOSSLPrivateKey
            do { key = try NIOSSLPrivateKey(file: privateKey, format: .pem) } catch {
                throw .invalid("--tls-key \(privateKey): not a readable PEM private key (\(error))")
            }
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) },
                privateKey: .privateKey(key)
            )
            configuration.minimumTLSVersion = .tlsv12
            do { return try NIOSSLContext(configuration: configuration) } catch {
                throw .invalid("--tls-cert and --tls-key do not make a TLS context (does the key match the certificate?): \(error)")
            }
        }
    }

    public var host: String
    public var port: Int
    /// The legacy single key: an admin key of `authenticator` (writes need `Authorization: Bearer <key>`).
    public var apiKey: String?
    /// Who may write: keys with scopes and users' tokens. By default only `apiKey` (open when that is nil too).
    public var authenticator: Authenticator
    /// Writes per second and burst, per user and per client address (keys are not limited); nil: no limit.
    public var writeLimits: (rate: Double, burst: Int)?
    /// The most pins one user may have; nil: no cap.
    public var maximumPinsPerUser: Int?
    /// HTTPS with this certificate chain and private key (PEM files); nil: plain HTTP.
    public var tls: TLSFiles?
    /// Timeouts and size limits of connections and requests.
    public var limits: ConnectionLimits
    /// The origin allowed to call the API from a browser (CORS), `*` for any, nil for none (the default).
    public var corsOrigin: String?
    /// The map page's tiles, Leaflet and outlines.
    public var mapPage: MapPageConfiguration
    /// The bundled data directory (categories.json for the AMap adapter's POI classes); nil: `DataDirectory.resolve()`.
    public var dataDirectory: String?
    /// Whether GET/HEAD of read routes are answered on the event loop, below the router (`FastLaneHandler`); on by
    /// default, `--no-fast-lane` turns it off (the same answers, through Hummingbird's router). Off with CORS.
    public var fastLane = true
    /// Where `POST /v1/backups` writes (`--backup-dir`); nil: `DB.backups` beside the database.
    public var backupDirectory: String?
    /// The request log (`--access-log FILE|-`); nil: none.
    public var accessLog: AccessLog?
    /// Bytes of vector tiles kept while their layer's data stays the same (`--tile-cache-mb`; `TileCache`); 0: none.
    public var tileCacheBytes = 64 << 20

    /// Largest accepted request body.
    public var maximumBodySize: Int { limits.maximumBodySize }

    /// How fences' webhooks retry.
    public var webhookPolicy = WebhookPolicy()

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        apiKey: String? = nil,
        limits: ConnectionLimits = ConnectionLimits(),
        corsOrigin: String? = nil,
        mapPage: MapPageConfiguration = MapPageConfiguration(),
        dataDirectory: String? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.host = host
        self.port = port
        self.apiKey = apiKey
        self.authenticator = Authenticator(keys: KeyRing(legacyKey: apiKey), tokens: nil)
        self.limits = limits
        self.corsOrigin = corsOrigin
        self.mapPage = mapPage
    }

    /// Whether every address `host` resolves to is on this machine (127.0.0.0/8 or ::1) — judged by the resolved
    /// addresses, not the name: `127.evil.example` is whatever its DNS says.
    public var isLoopback: Bool {
        guard let addresses = Self.resolve(host), !addresses.isEmpty else { return false }
        return addresses.allSatisfy(\.isLoopback)
    }

    /// The rule of docs/ARCHITECTURE.md, "The HTTP contract": without an API key the server only accepts writes on loopback, and refuses to
    /// start on another address.
    public func validate() throws(ServerConfigurationError) {
        guard (0...65_535).contains(port) else { throw .invalid("--port must be between 0 and 65535") }
        guard Self.resolve(host)?.isEmpty == false else { throw .invalid("--host \(host) does not resolve to an address") }
        if authenticator.isOpen && !isLoopback {
            throw .invalid(
                "refusing to listen on \(host) without credentials for writes: it is not a loopback address; pass --api-key (or set POI_API_KEY), --keys-file, --auth-jwks or --auth-hs256-secret-file"
            )
        }
        if let writeLimits, !(writeLimits.rate > 0 && writeLimits.rate.isFinite) || writeLimits.burst < 1 {
            throw .invalid("--write-rate must be a positive number of writes a second and --write-burst at least 1")
        }
        if let maximumPinsPerUser, maximumPinsPerUser < 1 { throw .invalid("--max-pins-per-user must be at least 1") }
        if let apiKey, apiKey.count < 8 { throw .invalid("the API key must be at least 8 characters") }
        guard limits.requestTimeout > .zero else { throw .invalid("--request-timeout must be greater than 0") }
        guard limits.idleTimeout > .zero else { throw .invalid("--idle-timeout must be greater than 0") }
        guard limits.maximumConnections >= 1 else { throw .invalid("--max-connections must be at least 1") }
        if let origin = corsOrigin, origin != "*" {
            let parts = origin.split(separator: "://", maxSplits: 1)
            guard parts.count == 2, ["http", "https"].contains(parts[0].lowercased()), !parts[1].isEmpty, !parts[1].contains("/") else {
                throw .invalid("--cors must be * or an origin such as https://maps.example.org (scheme and host, no path); got \(origin)")
            }
        }
        try mapPage.validate()
    }

    /// A resolved address of `host`.
    enum Address {
        case v4(UInt32)
        case v6([UInt8])

        var isLoopback: Bool {
            switch self {
            case .v4(let address): return address >> 24 == 127
            case .v6(let bytes):
                if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
                // ::ffff:127.x.y.z, an IPv4-mapped loopback address.
                return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
            }
        }
    }

    /// The addresses `host` resolves to (numeric addresses without a lookup), or nil when it does not resolve.
    static func resolve(_ host: String) -> [Address]? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let sockaddr = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        addresses.append(.v4(UInt32(bigEndian: v4.pointee.sin_addr.s_addr)))
                    }
                case AF_INET6:
                    sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        addresses.append(.v6(withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }))
                    }
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        return addresses
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
