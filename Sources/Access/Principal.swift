/// What a key may do. A user with a valid token needs no scope: they may create pins and change their own.
public enum Scope: String, CaseIterable, Sendable, Codable, Comparable {
    /// Everything: imports, POI writes, any pin, tasks.
    case admin
    /// Imports (`POST /v1/import`) and their tasks.
    case importRecords = "import"
    /// Creating, replacing and deleting POIs.
    case writePOIs = "pois:write"
    /// Any pin, whoever placed it: a moderation service.
    case writePins = "pins:write"
    /// Live areas: making and removing fences and reading their events (which carry users' pins).
    case manageFences = "fences"

    public static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who sent a write.
public enum Principal: Sendable, Equatable {
    /// No credentials (allowed only when the server has none configured).
    case anonymous
    /// An operator's or a service's key, by its name in the keys file.
    case key(name: String, scopes: Set<Scope>)
    /// A user, by their token's `sub`.
    case user(String)

    /// Whether the principal holds `scope` (admin holds them all).
    public func has(_ scope: Scope) -> Bool {
        guard case .key(_, let scopes) = self else { return false }
        return scopes.contains(.admin) || scopes.contains(scope)
    }

    /// The owner recorded on a pin this principal creates: a user's `sub`; nil for keys and anonymous writers.
    public var owner: String? {
        if case .user(let subject) = self { return subject }
        return nil
    }

    /// Names the principal in logs and messages, never with a secret.
    public var description: String {
        switch self {
        case .anonymous: "anonymous"
        case .key(let name, _): "key \(name)"
        case .user(let subject): "user \(subject)"
        }
    }
}

/// Why a write was refused: 401 (who are you?), 403 (not you), 429 (not now).
public enum AccessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No credentials sent, or a key that is not one of the server's.
    case noCredentials(String)
    /// A token that does not prove anything (bad signature, expired, unknown key id).
    case unauthenticated(String)
    /// Known, but not allowed to do this.
    case forbidden(String)
    /// Over a rate limit or a cap: try again after `retryAfter` seconds (nil: not by waiting).
    case limited(String, retryAfter: Int?)

    public var description: String {
        switch self {
        case .noCredentials(let message), .unauthenticated(let message), .forbidden(let message), .limited(let message, _): message
        }
    }
}
