import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// Where the identity provider publishes its signing keys, when they are fetched rather than read from a file:
/// a JWKS URL (`--auth-jwks https://…`), or the issuer's OpenID discovery document
/// (`--auth-issuer https://…` without `--auth-jwks`: `{issuer}/.well-known/openid-configuration`, whose `jwks_uri`
/// names the key set and whose `issuer` must be the configured one, as OpenID Connect Discovery §4.3 requires).
public enum KeyLocation: Sendable, Equatable {
    case jwks(String)
    case discovery(issuer: String)

    /// A location must be HTTPS — a key set fetched in the clear could be swapped by anyone on the path — except on
    /// loopback, where a local provider or a test may serve plain HTTP.
    static func check(_ url: String, option: String) throws(AccessConfigurationError) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty else {
            throw .malformed(option, "\(url) is not an absolute URL")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw .malformed(option, "\(url) must be an https:// URL (plain http only on loopback)")
        }
    }
}

/// The keys fetched from a `KeyLocation`, and what the server knows of the provider: when the keys came, whether the
/// last attempt reached it, and when to ask again.
///
/// - **Cached per `Cache-Control`:** the set is fetched again when its `max-age` runs out (1 hour when the answer
///   names none; never sooner than `minimumRefresh`, never later than a day).
/// - **An unknown `kid`** (the provider rotated to a key published after the last fetch): fetched again at once, at
///   most once per `unknownKeyInterval`, so that a flood of tokens with made-up key ids cannot make the server flood
///   the provider.
/// - **Provider down:** the keys in force stay in force; the failure is kept for `/health` and `/metrics` and the
///   fetch is tried again after `minimumRefresh`.
final class RemoteKeySet: Sendable {
    /// What `/health` and `/metrics` say about the provider's keys.
    struct State: Sendable {
        var jwksURL: String?
        var fetchedAt: Date?
        var lastAttemptAt: Date?
        var lastError: String?
        var nextRefresh = Date.distantPast
        var lastUnknownKeyFetch = Date.distantPast
        var fetches = 0
        var failures = 0
    }

    let location: KeyLocation
    let caFile: String?
    let minimumRefresh: TimeInterval
    let unknownKeyInterval: TimeInterval
    let state = Mutex(State())
    static let defaultMaxAge: TimeInterval = 3_600
    static let maximumBody = 1 << 20

    init(location: KeyLocation, caFile: String?, minimumRefresh: TimeInterval, unknownKeyInterval: TimeInterval) {
        self.location = location
        self.caFile = caFile
        self.minimumRefresh = minimumRefresh
        self.unknownKeyInterval = unknownKeyInterval
    }

    /// The location as the operator named it, for messages.
    var name: String {
        switch location {
        case .jwks(let url): url
        case .discovery(let issuer): issuer + "/.well-known/openid-configuration"
        }
    }

    /// Whether an unknown `kid` may cause a fetch now (and, if so, records that it did).
    func mayFetchForUnknownKey(now: Date = Date()) -> Bool {
        state.withLock { state in
            guard now.timeIntervalSince(state.lastUnknownKeyFetch) >= unknownKeyInterval else { return false }
            state.lastUnknownKeyFetch = now
            return true
        }
    }

    /// Fetches the key set (through discovery first when the location is an issuer): the JWKS text, or why not.
    /// Records the attempt, and when to fetch again.
    func fetch(now: Date = Date()) async -> Result<String, FetchError> {
        let result: Result<String, FetchError>
        var maxAge: TimeInterval?
        do {
            let url = try await jwksURL()
            let (body, age) = try await Self.get(url, caFile: caFile)
            maxAge = age
            result = .success(body)
        } catch {
            result = .failure(error)
        }
        state.withLock { state in
            state.lastAttemptAt = now
            state.fetches += 1
            switch result {
            case .success:
                state.fetchedAt = now
                state.lastError = nil
                let age = min(max(maxAge ?? Self.defaultMaxAge, minimumRefresh), 86_400)
                state.nextRefresh = now.addingTimeInterval(age)
            case .failure(let error):
                state.failures += 1
                state.lastError = error.description
                state.nextRefresh = now.addingTimeInterval(minimumRefresh)
            }
        }
        return result
    }

    /// The key set's URL: the configured one, or the discovery document's `jwks_uri` (found once).
    private func jwksURL() async throws(FetchError) -> String {
        switch location {
        case .jwks(let url): return url
        case .discovery(let issuer):
            if let known = state.withLock({ $0.jwksURL }) { return known }
            let document = issuer.hasSuffix("/") ? issuer + ".well-known/openid-configuration" : issuer + "/.well-known/openid-configuration"
            let (body, _) = try await Self.get(document, caFile: caFile)
            struct Discovery: Decodable {
                var issuer: String?
                var jwks_uri: String?
            }
            guard let parsed = try? JSONDecoder().decode(Discovery.self, from: Data(body.utf8)) else {
                throw FetchError(url: document, reason: "not an OpenID discovery document (JSON with issuer and jwks_uri)")
            }
            guard parsed.issuer == issuer else {
                throw FetchError(url: document, reason: "its issuer is \(parsed.issuer ?? "missing"), not \(issuer)")
            }
            guard let jwksURL = parsed.jwks_uri else { throw FetchError(url: document, reason: "it names no jwks_uri") }
            do { try KeyLocation.check(jwksURL, option: "jwks_uri") } catch { throw FetchError(url: document, reason: error.description) }
            state.withLock { $0.jwksURL = jwksURL }
            return jwksURL
        }
    }

    /// One GET: the body (at most 1 MiB) and the answer's `Cache-Control: max-age`, or why not. A client per fetch:
    /// fetches are hours apart, and a client shut down after its one request leaves nothing to shut down at exit.
    static func get(_ url: String, caFile: String?) async throws(FetchError) -> (body: String, maxAge: TimeInterval?) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(10))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let outcome: Result<(String, TimeInterval?), FetchError>
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await client.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: maximumBody)
            if response.status == .ok {
                outcome = .success((String(buffer: body), maxAge(response.headers.first(name: "Cache-Control"))))
            } else {
                outcome = .failure(FetchError(url: url, reason: "HTTP \(response.status.code)"))
            }
        } catch {
            outcome = .failure(FetchError(url: url, reason: "\(error)"))
        }
        try? await client.shutdown()
        return try outcome.get()
    }

    /// `max-age` of a Cache-Control value (`no-cache` and `no-store` are 0: fetch again as soon as allowed).
    static func maxAge(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-cache", "no-store": return 0
            case "max-age": if parts.count == 2, let seconds = Int(parts[1]), seconds >= 0 { return TimeInterval(seconds) }
            default: continue
            }
        }
        return nil
    }

    /// A fetch that did not bring a key set, named by URL.
    struct FetchError: Error, CustomStringConvertible {
        let url: String
        let reason: String
        var description: String { "\(url): \(reason)" }
    }
}
