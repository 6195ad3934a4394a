import Foundation
import GeoCore
import TextIndex

/// Bad geocoding input, each naming the parameter and the rule.
public enum GazetteerError: Error, Equatable, CustomStringConvertible {
    case emptyQuery
    case queryTooLong(Int)
    case controlCharacters
    case invalidLimit(Int)
    case unknownCountry(String)
    case unknownLanguage(String)

    /// The parameter the error is about.
    public var parameter: String {
        switch self {
        case .emptyQuery, .queryTooLong, .controlCharacters: return "q"
        case .invalidLimit: return "limit"
        case .unknownCountry: return "country"
        case .unknownLanguage: return "lang"
        }
    }

    /// The rule broken, without the parameter's name.
    public var rule: String {
        switch self {
        case .emptyQuery: return "must not be empty"
        case .queryTooLong(let n): return "must be at most \(GeocodeQuery.maximumLength) characters (got \(n))"
        case .controlCharacters: return "must not contain control characters"
        case .invalidLimit(let n): return "must be an integer between 1 and 100 (got \(n))"
        case .unknownCountry(let c): return "must be an ISO 3166-1 alpha-2 code such as FI or CN (got \"\(c)\")"
        case .unknownLanguage(let l): return "must be en or zh (got \"\(l)\")"
        }
    }

    public var description: String { "\(parameter) \(rule)" }
}

/// A validated forward-geocoding request.
public struct GeocodeQuery: Sendable {
    public enum Language: String, Sendable {
        case en, zh
    }

    public static let maximumLength = 500

    public let text: String
    public let limit: Int
    /// Upper-case ISO code, or nil for the whole world.
    public let country: String?
    public let language: Language
    /// Favour places near this point.
    public let near: Coordinate?
    /// The text read as addresses (street, number, unit, postcode, qualifiers; a Chinese address several ways),
    /// parsed here once and asked of every address index (`AddressIndex.search`).
    let readings: [ParsedAddress]

    public init(text: String, limit: Int = 10, country: String? = nil, language: String? = nil, near: Coordinate? = nil) throws(GazetteerError) {
        // Lengths count Unicode scalars, as JSON Schema's maxLength does, before trimming.
        guard text.unicodeScalars.count <= GeocodeQuery.maximumLength else { throw .queryTooLong(text.unicodeScalars.count) }
        let trimmed = TextNormalizer.trimmed(text)
        guard !trimmed.isEmpty else { throw .emptyQuery }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .controlCharacters
        }
        guard (1...100).contains(limit) else { throw .invalidLimit(limit) }
        if let country {
            guard country.count == 2, country.allSatisfy({ $0.isASCII && $0.isLetter }) else { throw .unknownCountry(country) }
        }
        var lang = Language.en
        if let language {
            guard let parsed = Language(rawValue: language.lowercased()) else { throw .unknownLanguage(language) }
            lang = parsed
        }
        self.text = trimmed
        self.limit = limit
        self.country = country?.uppercased()
        self.language = lang
        self.near = near
        readings = ParsedAddress.parse(trimmed)
    }
}
