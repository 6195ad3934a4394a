import Foundation
import NIOCore
import NIOSSL
import PostgresNIO
import Records

/// A store URL in libpq's convention, read without connecting:
///
///     postgresql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?PARAMETER=VALUE&…]
///
/// Several hosts are tried in turn, as libpq does, starting from the one that last answered. Parameters:
/// - `target_session_attrs`: `any` (the default for one host), `read-write` (the default for several: a standby that
///   was not promoted is passed over) or `primary` (not in recovery).
/// - `sslmode`: `disable` (the default), `prefer`, `require` (encrypted, the certificate not checked), `verify-ca`
///   (signed by `sslrootcert`) or `verify-full` (also issued for the host named in the URL).
/// - `sslrootcert`: the PEM file of the certificate authorities `verify-ca` and `verify-full` trust.
/// - `connect_timeout`: seconds to wait for each host (default 5).
/// Anything else is refused by name rather than ignored.
struct StoreURL: Equatable {
    struct Host: Equatable {
        var name: String
        var port: Int
        var description: String { name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)" }
    }

    enum SessionAttributes: String, CaseIterable {
        case any
        case readWrite = "read-write"
        case primary
    }

    enum SSLMode: String, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    var user: String
    var password: String?
    var hosts: [Host]
    var database: String
    var sessionAttributes: SessionAttributes
    var sslMode: SSLMode = .disable
    var sslRootCertificate: String?
    var connectTimeout: Int64 = 5

    /// The URL without its password, for logs and messages.
    var location: String {
        var text = "postgresql://\(user)@\(hosts.map(\.description).joined(separator: ","))/\(database)"
        var parameters: [String] = []
        if hosts.count > 1 || sessionAttributes != .any { parameters.append("target_session_attrs=\(sessionAttributes.rawValue)") }
        if sslMode != .disable { parameters.append("sslmode=\(sslMode.rawValue)") }
        if !parameters.isEmpty { text += "?" + parameters.joined(separator: "&") }
        return text
    }

    init(_ url: String) throws(CatalogError) {
        func refuse(_ reason: String) -> CatalogError { .cannotOpen(path: url, reason: reason) }
        func decode(_ text: Substring) throws(CatalogError) -> String {
            guard let decoded = String(text).removingPercentEncoding else { throw refuse("bad percent-encoding in \(text)") }
            return decoded
        }
        guard let schemeEnd = url.range(of: "://"), ["postgresql", "postgres"].contains(url[..<schemeEnd.lowerBound].lowercased()) else {
            throw refuse("not a postgresql://USER@HOST:PORT/DATABASE URL")
        }
        var rest = url[schemeEnd.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let path = slash < rest.endIndex ? rest[rest.index(after: slash)...] : ""
        var userInfo: Substring = ""
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }
        let userPart = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        user = try decode(userPart.first ?? "")
        guard !user.isEmpty else { throw refuse("the URL names no user") }
        password = userPart.count > 1 ? try decode(userPart[1]) : nil
        database = try decode(path)
        guard !database.isEmpty, !database.contains("/") else { throw refuse("the URL names no database") }

        hosts = []
        for entry in authority.split(separator: ",", omittingEmptySubsequences: false) {
            var name: Substring
            var portText: Substring?
            if entry.hasPrefix("[") {
                guard let close = entry.firstIndex(of: "]") else { throw refuse("unclosed [ in host \(entry)") }
                name = entry[entry.index(after: entry.startIndex)..<close]
                let after = entry[entry.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { throw refuse("unexpected text after ] in host \(entry)") }
                    portText = after.dropFirst()
                }
            } else if let colon = entry.firstIndex(of: ":") {
                name = entry[..<colon]
                portText = entry[entry.index(after: colon)...]
            } else {
                name = entry
            }
            guard !name.isEmpty else { throw refuse(authority.isEmpty ? "the URL names no host" : "an empty host in the host list \(authority)") }
            var port = 5432
            if let portText {
                guard let number = Int(portText), (1...65535).contains(number) else {
                    throw refuse("the port of \(name) must be between 1 and 65535 (got \(portText))")
                }
                port = number
            }
            hosts.append(Host(name: try decode(name), port: port))
        }

        sessionAttributes = hosts.count > 1 ? .readWrite : .any
        var seen: Set<String> = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0])
            let value = parts.count > 1 ? try decode(parts[1]) : ""
            guard seen.insert(name).inserted else { throw refuse("the parameter \(name) is given twice") }
            switch name {
            case "target_session_attrs":
                guard let attributes = SessionAttributes(rawValue: value) else {
                    throw refuse(
                        "target_session_attrs must be one of \(SessionAttributes.allCases.map(\.rawValue).joined(separator: ", ")) (got \(value))"
                    )
                }
                sessionAttributes = attributes
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw refuse("sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")) (got \(value))")
                }
                sslMode = mode
            case "sslrootcert":
                guard !value.isEmpty else { throw refuse("sslrootcert must name a PEM file") }
                sslRootCertificate = value
            case "connect_timeout":
                guard let seconds = Int64(value), (1...3600).contains(seconds) else {
                    throw refuse("connect_timeout must be a whole number of seconds from 1 to 3600 (got \(value))")
                }
                connectTimeout = seconds
            default:
                throw refuse(
                    "unsupported URL parameter \(name) (supported: target_session_attrs, sslmode, sslrootcert, connect_timeout)"
                )
            }
        }
        if sslMode == .verifyCA || sslMode == .verifyFull {
            guard let file = sslRootCertificate else {
                throw refuse("sslmode=\(sslMode.rawValue) needs sslrootcert=FILE, the certificate authority to trust")
            }
            guard FileManager.default.isReadableFile(atPath: file) else { throw refuse("sslrootcert \(file) is not a readable file") }
        } else if let file = sslRootCertificate, sslMode == .disable {
            throw refuse("sslrootcert=\(file) is given but sslmode is disable")
        }
    }

    /// One connection configuration per host, in the URL's order, with TLS as `sslmode` asks.
    func configurations() throws(CatalogError) -> [PostgresConnection.Configuration] {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch sslMode {
            case .disable:
                tls = .disable
            case .prefer, .require:
                // libpq's require: encrypted, but the server's certificate is not checked.
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: configuration)
                tls = sslMode == .prefer ? .prefer(context) : .require(context)
            case .verifyCA, .verifyFull:
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .file(sslRootCertificate!)
                configuration.certificateVerification = sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
                tls = .require(try NIOSSLContext(configuration: configuration))
            }
        } catch {
            throw .cannotOpen(path: location, reason: "cannot set up TLS from sslrootcert \(sslRootCertificate ?? "-"): \(error)")
        }
        return hosts.map { host in
            var configuration = PostgresConnection.Configuration(
                host: host.name,
                port: host.port,
                username: user,
                password: password,
                database: database,
                tls: tls
            )
            configuration.options.connectTimeout = .seconds(connectTimeout)
            return configuration
        }
    }
}
