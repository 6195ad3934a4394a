/// Turns a request's credentials into a principal: `Authorization: Bearer <credentials>` where the credentials are
/// a user's token (a JWT, when a JWKS or secret is configured) or an API key of the keys file.
public final class Authenticator: Sendable {
    public let keys: KeyRing
    public let tokens: TokenVerifier?

    public init(keys: KeyRing, tokens: TokenVerifier?) {
        self.keys = keys
        self.tokens = tokens
    }

    /// No keys and no token verifier: writes are open (the server then listens on loopback only).
    public var isOpen: Bool { keys.isEmpty && tokens == nil }

    /// What an `Authorization` header proves without waiting.
    public enum Proof: Sendable {
        case principal(Principal)
        case refused(AccessError)
        /// A token not verified yet (not in the verified-token cache): `principal(authorization:)` verifies it.
        case unverifiedToken(String)
    }

    /// What the `Authorization` header value `header` proves (nil: the header is absent), decided without waiting:
    /// the byte lane's write screen asks this, and `principal(authorization:)` is this plus a token's verification.
    public func proof(authorization header: Substring?) -> Proof {
        guard let header else {
            if isOpen { return .principal(.anonymous) }
            return .refused(.noCredentials("writes need the header Authorization: Bearer <token or API key>"))
        }
        // The scheme is case-insensitive (RFC 9110 §11.1); one or more spaces before the credentials.
        guard header.count > 7, header.prefix(6).lowercased() == "bearer", header.dropFirst(6).first == " " else {
            if isOpen { return .principal(.anonymous) }
            return .refused(.unauthenticated("writes need the header Authorization: Bearer <token or API key>"))
        }
        let credentials = header.dropFirst(6).drop(while: { $0 == " " })
        if !keys.isEmpty, let entry = keys.entry(forKey: String(credentials)) { return .principal(.key(name: entry.name, scopes: entry.scopes)) }
        if let tokens, TokenVerifier.looksLikeToken(credentials) {
            let token = String(credentials)
            switch tokens.cached(token) {
            case .success(let subject)?: return .principal(.user(subject))
            case .failure(let error)?: return .refused(error)
            case nil: return .unverifiedToken(token)
            }
        }
        if isOpen { return .principal(.anonymous) }
        return .refused(.noCredentials(tokens == nil ? "the API key is not valid" : "the credentials are neither a valid API key nor a token"))
    }

    /// The principal of an `Authorization` header value (nil: the header is absent).
    public func principal(authorization header: String?) async throws(AccessError) -> Principal {
        switch proof(authorization: header?[...]) {
        case .principal(let principal): return principal
        case .refused(let error): throw error
        case .unverifiedToken(let token): return .user(try await tokens!.verify(token))
        }
    }

    /// The user a read comes from, for the answers that say whether a pin is theirs (`owned`): the `sub` of a valid
    /// token, else nil. A read never fails on its credentials (On the Map clients send Parse's fixed REST key, and a
    /// list or a pin is public); an invalid or expired token only means the reader owns nothing.
    public func reader(authorization header: String?) async -> String? {
        guard let tokens, let header, header.count > 7, header.prefix(6).lowercased() == "bearer", header.dropFirst(6).first == " " else {
            return nil
        }
        let credentials = header.dropFirst(6).drop(while: { $0 == " " })
        guard TokenVerifier.looksLikeToken(credentials) else { return nil }
        return try? await tokens.verify(String(credentials))
    }

    /// Reads the keys file and the token keys again; the first error is thrown after both were tried.
    public func reload() async throws(AccessConfigurationError) {
        var failure: AccessConfigurationError?
        do { try keys.reload() } catch { failure = error }
        if let tokens {
            do { try await tokens.reload() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}

/// Who may write what (README, "Who may write what"):
///
/// | action | open server | user token | key scope |
/// |---|---|---|---|
/// | import, tasks | yes | no | import |
/// | POI create/replace/delete | yes | no | pois:write |
/// | pin create | yes | yes (owns it) | pins:write |
/// | pin move/delete | yes | own pins only | pins:write |
///
/// `admin` holds every scope.
public enum WritePolicy {
    public static func importRecords(_ principal: Principal) throws(AccessError) {
        try require(.importRecords, principal, "imports")
    }

    public static func writePOI(_ principal: Principal) throws(AccessError) {
        try require(.writePOIs, principal, "POI writes")
    }

    public static func manageFences(_ principal: Principal) throws(AccessError) {
        try require(.manageFences, principal, "fences and their events")
    }

    /// Who may create a pin; answers the pin's owner.
    public static func createPin(_ principal: Principal) throws(AccessError) -> String? {
        switch principal {
        case .anonymous: return nil
        case .user(let subject): return subject
        case .key:
            try require(.writePins, principal, "creating pins with a key")
            return nil
        }
    }

    /// Who may move or delete a pin owned by `owner` (nil: placed by a key or before ownership was recorded).
    public static func changePin(_ principal: Principal, owner: String?) throws(AccessError) {
        switch principal {
        case .anonymous: return
        case .user(let subject):
            guard owner == subject else { throw .forbidden("this pin belongs to someone else: only its owner may change it") }
        case .key: try require(.writePins, principal, "changing pins with a key")
        }
    }

    private static func require(_ scope: Scope, _ principal: Principal, _ what: String) throws(AccessError) {
        switch principal {
        case .anonymous: return
        case .user: throw .forbidden("\(what) need an API key with the \(scope.rawValue) scope; a user token allows pins only")
        case .key(let name, _):
            guard principal.has(scope) else { throw .forbidden("\(what) need the \(scope.rawValue) scope, which the key \(name) lacks") }
        }
    }
}
