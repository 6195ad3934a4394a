import GeoCore
import Records

/// Bad queries and failed writes, each naming the parameter and the rule (the HTTP layer turns these into
/// problem+json, the CLI into exit status 2).
public enum SearchError: Error, Equatable, CustomStringConvertible {
    case invalid(parameter: String, rule: String)
    case notFound(kind: String, id: String)
    case storage(String)
    /// The store cannot be reached now (a shared store restarting); the client may retry.
    case unavailable(String)
    /// A quota is used up (a user's pins): refused until something is deleted, not by waiting.
    case quota(String)

    public var description: String {
        switch self {
        case .quota(let reason): return reason
        case .invalid(let parameter, let rule): return parameter.isEmpty ? rule : "\(parameter) \(rule)"
        case .notFound(let kind, let id): return "no \(kind) with id \"\(id)\""
        case .storage(let reason): return reason
        case .unavailable(let reason): return reason
        }
    }

    static func from(_ error: CatalogError) -> SearchError {
        if case .unavailable = error { return .unavailable(error.description) }
        return .storage(error.description)
    }

    /// A GeoCore error as a bad parameter: the one it names, else `parameter` (whose value broke it).
    static func from(_ error: GeoError, parameter: String? = nil) -> SearchError {
        if case .invalidGeohashPrecision = error { return .invalid(parameter: "precision", rule: "must be an integer between 1 and 12") }
        return .invalid(parameter: error.parameter ?? parameter ?? "", rule: error.rule)
    }
}
