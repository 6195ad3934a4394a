import Catalog
import GeoCore

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
        case .invalid(let parameter, let rule): return "\(parameter) \(rule)"
        case .notFound(let kind, let id): return "no \(kind) with id \"\(id)\""
        case .storage(let reason): return reason
        case .unavailable(let reason): return reason
        }
    }

    static func from(_ error: CatalogError) -> SearchError {
        if case .unavailable = error { return .unavailable(error.description) }
        return .storage(error.description)
    }

    static func from(_ error: GeoError, parameter: String? = nil) -> SearchError {
        switch error {
        case .invalidBoundingBox(let rule): return .invalid(parameter: "bbox", rule: rule)
        case .invalidPolygon(let rule): return .invalid(parameter: "polygon", rule: rule)
        case .invalidGeohashPrecision: return .invalid(parameter: "precision", rule: "must be an integer between 1 and 12")
        default:
            let text = error.description
            if let parameter, !text.hasPrefix(parameter) { return .invalid(parameter: parameter, rule: text) }
            let parts = text.split(separator: " ", maxSplits: 1)
            return .invalid(parameter: String(parts[0]), rule: parts.count > 1 ? String(parts[1]) : "")
        }
    }
}
