import Foundation
import JWTKit
import Synchronization

/// Verifies users' tokens: JSON Web Tokens signed by an identity provider (RS256/ES256 and the other asymmetric
/// algorithms, keys from a JWKS as OIDC providers publish them — a file, or fetched from a URL or through OpenID
/// discovery and kept current, `RemoteKeySet`) or with a shared secret (HS256). The signature
/// is checked by jwt-kit; this type decides which key and algorithm may be used, and checks the claims:
///
/// - the header's `alg` must be one the key allows — `none` never, an HMAC algorithm only with the secret, and a
///   JWKS key's own `alg` when it names one (no algorithm confusion);
/// - a `kid` must name a key of the set (a token signed by a removed or unknown key is refused, not tried against
///   another), and a JWKS token must carry one;
/// - `exp` is required; `exp` and `nbf` are checked with `leeway` seconds for clock skew;
/// - `iss` and `aud` must match when configured;
/// - `sub` is the user, non-empty, at most 200 characters.
public final class TokenVerifier: Sendable {
    public struct Settings: Sendable {
        public var jwksFile: String?
        /// The provider's keys by URL or through discovery (instead of `jwksFile`).
        public var jwksLocation: KeyLocation?
        /// PEM certificates trusted for the provider's HTTPS beside the system's (a private CA).
        public var caFile: String?
        public var secretFile: String?
        public var issuer: String?
        public var audience: String?
        public var leeway: Int
        /// The soonest a fetched key set is fetched again, whatever its Cache-Control says, and the wait after a
        /// failed fetch (seconds).
        public var minimumRefresh: TimeInterval = 60
        /// The soonest a token with an unknown key id causes another fetch (seconds).
        public var unknownKeyInterval: TimeInterval = 60

        public init(
            jwksFile: String? = nil,
            jwksLocation: KeyLocation? = nil,
            caFile: String? = nil,
            secretFile: String? = nil,
            issuer: String? = nil,
            audience: String? = nil,
            leeway: Int = 60
        ) {
            (self.jwksFile, self.jwksLocation, self.caFile, self.secretFile) = (jwksFile, jwksLocation, caFile, secretFile)
            (self.issuer, self.audience, self.leeway) = (issuer, audience, leeway)
        }

        public var isEmpty: Bool { jwksFile == nil && jwksLocation == nil && secretFile == nil }
    }

    /// What `/health` and `/metrics` say about keys fetched from the provider.
    public struct KeyStatus: Sendable {
        /// The key set's or the discovery document's URL.
        public let source: String
        public let keys: Int
        public let fetchedAt: Date?
        /// Whether the last attempt brought a key set.
        public let reachable: Bool
        public let lastError: String?
        public let fetches: Int
        public let failures: Int
    }

    /// The keys in force: jwt-kit's collections and what each `kid` allows.
    struct Keys: Sendable {
        var published: JWTKeyCollection?
        /// `kid` → the algorithm its JWK names (nil: any asymmetric algorithm of its key type).
        var publishedAlgorithms: [String: String?] = [:]
        var secret: JWTKeyCollection?
        /// The text of the key set in force, to tell a fetch that changed it.
        var publishedJSON: String?
    }

    static let asymmetric: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    public let settings: Settings
    private let keys: Mutex<Keys>
    /// Tokens already verified → their user and expiry: a client sends the same token for up to an hour, and a
    /// signature check (and jwt-kit's actor hop) per write would make a refused flood cost more than the reads beside
    /// it. The expiry is still checked on every use; the cache is emptied when the keys are reloaded and when full.
    private let verified = Mutex<[String: (subject: String, expires: Date)]>([:])
    static let cacheSize = 10_000

    /// The provider's keys fetched by URL, when they are.
    private let remote: RemoteKeySet?
    private let refresher = Mutex<Task<Void, Never>?>(nil)

    /// Reads the files; with a key location, fetches the key set once (a provider that cannot be reached now leaves
    /// no keys until a later fetch succeeds: `keyStatus` says why) and keeps it current in the background.
    public init(settings: Settings) async throws(AccessConfigurationError) {
        self.settings = settings
        if let location = settings.jwksLocation {
            switch location {
            case .jwks(let url): try KeyLocation.check(url, option: "--auth-jwks")
            case .discovery(let issuer): try KeyLocation.check(issuer, option: "--auth-issuer")
            }
            if let caFile = settings.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw .unreadable(caFile, "the CA file of --auth-ca-file cannot be read")
            }
            remote = RemoteKeySet(
                location: location,
                caFile: settings.caFile,
                minimumRefresh: settings.minimumRefresh,
                unknownKeyInterval: settings.unknownKeyInterval
            )
        } else {
            remote = nil
        }
        keys = Mutex(try await Self.read(settings))
        guard remote != nil else { return }
        await refresh()
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                guard let wait = self?.remote?.state.withLock({ $0.nextRefresh.timeIntervalSinceNow }) else { return }
                if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(min(wait, 3_600) * 1_000) + 1)) }
                guard let self, !Task.isCancelled else { return }
                if self.remote!.state.withLock({ $0.nextRefresh.timeIntervalSinceNow }) <= 0 { await self.refresh() }
            }
        }
        refresher.withLock { $0 = task }
    }

    deinit { refresher.withLock { $0?.cancel() } }

    /// Reads the JWKS and secret files again (SIGHUP), keeping the keys in force when they do not parse; fetches a
    /// key set named by URL again.
    public func reload() async throws(AccessConfigurationError) {
        let fresh = try await Self.read(settings)
        keys.withLock { current in
            // A fetched key set stays in force: only the files are read again; the fetch below renews it.
            if remote == nil {
                current = fresh
            } else {
                current.secret = fresh.secret
            }
        }
        verified.withLock { $0.removeAll() }
        if remote != nil { await refresh() }
    }

    /// Fetches the provider's key set and puts it in force when it parses; a failure keeps the keys in force.
    func refresh() async {
        guard let remote else { return }
        switch await remote.fetch() {
        case .failure: return
        case .success(let json):
            if keys.withLock({ $0.publishedJSON == json }) { return }
            do {
                let (collection, algorithms) = try await Self.published(json: json, name: remote.name)
                keys.withLock { keys in (keys.published, keys.publishedAlgorithms, keys.publishedJSON) = (collection, algorithms, json) }
                // A token verified under a key that is now gone must not stay valid from the cache.
                verified.withLock { $0.removeAll() }
            } catch {
                remote.state.withLock { state in
                    state.failures += 1
                    state.lastError = error.description
                }
            }
        }
    }

    /// The provider's keys and whether it answers, when they are fetched by URL; nil for files.
    public var keyStatus: KeyStatus? {
        guard let remote else { return nil }
        let state = remote.state.withLock { $0 }
        return KeyStatus(
            source: remote.name,
            keys: keys.withLock { $0.publishedAlgorithms.count },
            fetchedAt: state.fetchedAt,
            reachable: state.lastError == nil && state.fetchedAt != nil,
            lastError: state.lastError,
            fetches: state.fetches,
            failures: state.failures
        )
    }

    /// Whether `credentials` has the shape of a JWT (three base64url parts), as opposed to an API key.
    public static func looksLikeToken(_ credentials: Substring) -> Bool {
        credentials.utf8.count > 20 && credentials.utf8.filter { $0 == UInt8(ascii: ".") }.count == 2
            && credentials.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    /// The claims read from a token.
    struct Claims: JWTPayload {
        var sub: SubjectClaim?
        var exp: ExpirationClaim?
        var nbf: NotBeforeClaim?
        var iss: IssuerClaim?
        var aud: AudienceClaim?

        // The claims are checked by `verify(_:now:)`, with leeway and with messages of our own.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The answer for a token verified before (its user, or that it has expired since); nil for a token not verified
    /// yet. Never waits.
    public func cached(_ token: String, now: Date = Date()) -> Result<String, AccessError>? {
        guard let hit = verified.withLock({ $0[token] }) else { return nil }
        guard hit.expires.addingTimeInterval(TimeInterval(settings.leeway)) > now else { return .failure(.unauthenticated("the token has expired")) }
        return .success(hit.subject)
    }

    /// The user a valid token names (its `sub`), or why the token proves nothing.
    public func verify(_ token: String, now: Date = Date()) async throws(AccessError) -> String {
        if let hit = cached(token, now: now) { return try hit.get() }
        let header = try Self.header(token)
        guard let algorithm = header.alg else { throw .unauthenticated("the token's header names no algorithm (alg)") }
        guard algorithm.lowercased() != "none" else { throw .unauthenticated("unsigned tokens (alg: none) are refused") }
        var keys = self.keys.withLock { $0 }
        // A key id the set does not hold may be a key the provider published since the last fetch: fetch again (at
        // most once per interval), then decide.
        if let remote, Self.asymmetric.contains(algorithm), let kid = header.kid, keys.publishedAlgorithms[kid] == nil,
            remote.mayFetchForUnknownKey()
        {
            await refresh()
            keys = self.keys.withLock { $0 }
        }
        let collection: JWTKeyCollection
        if algorithm == "HS256" {
            guard let secret = keys.secret else { throw .unauthenticated("the token is signed with HS256, and this server takes no HS256 tokens") }
            collection = secret
        } else if Self.asymmetric.contains(algorithm) {
            guard let published = keys.published else {
                if let remote {
                    let reason = remote.state.withLock { $0.lastError } ?? "not fetched yet"
                    throw .unauthenticated("the identity provider's keys could not be fetched (\(reason)); retry shortly")
                }
                throw .unauthenticated("the token is signed with \(algorithm), and this server has no JWKS (--auth-jwks)")
            }
            guard let kid = header.kid else { throw .unauthenticated("the token names no key (kid); its JWKS needs one") }
            guard let allowed = keys.publishedAlgorithms[kid] else { throw .unauthenticated("the token's key id \"\(kid)\" is not in the key set") }
            if let allowed, allowed != algorithm {
                throw .unauthenticated("the token says \(algorithm), and its key \"\(kid)\" is for \(allowed)")
            }
            collection = published
        } else {
            throw .unauthenticated("the token's algorithm \(algorithm) is not accepted")
        }
        let claims: Claims
        do {
            claims = try await collection.verify(token, as: Claims.self)
        } catch {
            if let error = error as? JWTError, error.errorType == .signatureVerificationFailed {
                throw .unauthenticated("the token's signature is not valid")
            }
            throw .unauthenticated("the token is not valid: it does not verify against the configured keys")
        }
        let subject = try check(claims, now: now)
        // Only a token that is valid now is kept (nbf passed: `check` refused one that is not yet valid).
        if let expires = claims.exp?.value {
            verified.withLock { cache in
                if cache.count >= Self.cacheSize { cache.removeAll(keepingCapacity: true) }
                cache[token] = (subject, expires)
            }
        }
        return subject
    }

    private func check(_ claims: Claims, now: Date) throws(AccessError) -> String {
        let leeway = TimeInterval(settings.leeway)
        guard let exp = claims.exp else { throw .unauthenticated("the token has no expiry (exp)") }
        guard exp.value.addingTimeInterval(leeway) > now else { throw .unauthenticated("the token has expired") }
        if let nbf = claims.nbf, nbf.value.addingTimeInterval(-leeway) > now { throw .unauthenticated("the token is not valid yet (nbf)") }
        if let issuer = settings.issuer, claims.iss?.value != issuer {
            throw .unauthenticated("the token's issuer (iss) is not \(issuer)")
        }
        if let audience = settings.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw .unauthenticated("the token is not for this audience (aud must include \(audience))")
        }
        guard let subject = claims.sub?.value, !subject.isEmpty, subject.unicodeScalars.count <= 200,
            !subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .unauthenticated("the token names no user (sub must be 1 to 200 characters)") }
        return subject
    }

    struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    static func header(_ token: String) throws(AccessError) -> Header {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Data(base64URLEncoded: first),
            let header = try? JSONDecoder().decode(Header.self, from: data)
        else { throw .unauthenticated("the token is malformed: its header is not base64url JSON") }
        return header
    }

    /// A JSON Web Key Set's keys, checked: every key has a kid, is a public key and names an accepted algorithm if any.
    /// `name` (the file or URL) names the set in errors.
    static func published(json: String, name file: String) async throws(AccessConfigurationError) -> (JWTKeyCollection, [String: String?]) {
        struct Set: Decodable {
            struct Key: Decodable {
                var kid: String?
                var alg: String?
                var kty: String?
            }
            var keys: [Key]
        }
        guard let parsed = try? JSONDecoder().decode(Set.self, from: Data(json.utf8)) else {
            throw .malformed(file, "expected a JSON Web Key Set: {\"keys\": [{\"kty\", \"kid\", …}]}")
        }
        guard !parsed.keys.isEmpty else { throw .malformed(file, "the key set has no keys") }
        var algorithms: [String: String?] = [:]
        for (index, key) in parsed.keys.enumerated() {
            guard let kid = key.kid, !kid.isEmpty else { throw .malformed(file, "keys[\(index)] has no kid") }
            guard key.kty == "RSA" || key.kty == "EC" || key.kty == "OKP" else {
                throw .malformed(
                    file,
                    "keys[\(index)] (\(kid)): kty must be RSA, EC or OKP (public keys; a shared secret goes in --auth-hs256-secret-file)"
                )
            }
            if let alg = key.alg, !asymmetric.contains(alg) { throw .malformed(file, "keys[\(index)] (\(kid)): alg \(alg) is not accepted") }
            algorithms[kid] = key.alg
        }
        let collection = JWTKeyCollection()
        do { try await collection.add(jwksJSON: json) } catch { throw .malformed(file, "a key does not load: \(error)") }
        return (collection, algorithms)
    }

    private static func read(_ settings: Settings) async throws(AccessConfigurationError) -> Keys {
        var keys = Keys()
        if let file = settings.jwksFile {
            let json: String
            do { json = try String(contentsOfFile: file, encoding: .utf8) } catch { throw .unreadable(file, error.localizedDescription) }
            (keys.published, keys.publishedAlgorithms) = try await published(json: json, name: file)
            keys.publishedJSON = json
        }
        if let file = settings.secretFile {
            let secret: String
            do { secret = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) } catch {
                throw .unreadable(file, error.localizedDescription)
            }
            guard secret.utf8.count >= 32 else { throw .malformed(file, "the HS256 secret must be at least 32 bytes") }
            keys.secret = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        return keys
    }
}

extension Data {
    /// Base64url without padding (RFC 7515 §2).
    init?(base64URLEncoded text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
