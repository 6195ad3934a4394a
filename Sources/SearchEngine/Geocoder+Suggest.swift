import Foundation
import Gazetteer
import GeoCore
import Records
import TextIndex

/// What a search box asks on every keystroke: the text as typed so far, and where the user is.
public struct SuggestQuery: Sendable, Equatable {
    /// What a suggestion may be.
    public enum Source: String, Sendable, CaseIterable {
        case poi, address, place
    }

    public var text: String
    /// Nearer POIs, houses and streets first; distances are from here.
    public var origin: Coordinate?
    /// POIs inside it only.
    public var bbox: BoundingBox?
    /// POIs of these categories (or below) only.
    public var categories: [String]
    public var limit: Int
    public var sources: Set<Source>
    /// Upper-case ISO code: places, houses and streets of that country only.
    public var country: String?
    public var language: String?

    public init(
        text: String,
        origin: Coordinate? = nil,
        bbox: BoundingBox? = nil,
        categories: [String] = [],
        limit: Int = 10,
        sources: Set<Source> = Set(Source.allCases),
        country: String? = nil,
        language: String? = nil
    ) {
        self.text = text
        self.origin = origin
        self.bbox = bbox
        self.categories = categories
        self.limit = limit
        self.sources = sources
        self.country = country
        self.language = language
    }
}

extension Geocoder {
    /// Suggestions as the text is typed: POIs, houses and streets, and places in one list.
    ///
    /// POIs come from keyword search (the last word a prefix, typos, the query read as pinyin; nearer first with an
    /// origin); houses and streets from address completion ("Mannerheimintie 1" → 1, 1A, 10 …); places from the
    /// gazetteer by name or a prefix of it (no spelling neighbours: a keystroke's text is not yet a word). The list,
    /// each part in its own order: places named as typed (or large ones begun); houses; streets named in full; the
    /// first three streets begun; POIs; the other streets begun; other places. Without letters or digits the text
    /// suggests nothing.
    public func suggest(_ query: SuggestQuery) throws(SearchError) -> [GeocodeCandidate] {
        guard query.limit > 0, !TextNormalizer.normalize(query.text).isEmpty else { return [] }
        let geocodeQuery: GeocodeQuery
        do {
            geocodeQuery = try GeocodeQuery(
                text: query.text,
                limit: query.limit,
                country: query.country,
                language: query.language,
                near: query.origin
            )
        } catch {
            throw .invalid(parameter: error.parameter, rule: error.rule)
        }
        var addresses: [GeocodeResult] = []
        if query.sources.contains(.address) {
            addresses = gazetteer.complete(geocodeQuery, addresses: self.addresses)
                .filter { query.bbox?.contains(latitude: $0.latitude, longitude: $0.longitude) ?? true }
        }
        var places: [GeocodeResult] = []
        if query.sources.contains(.place) {
            places = gazetteer.geocode(geocodeQuery, placeTypos: false)
        }
        var pois: [GeocodeCandidate] = []
        if query.sources.contains(.poi), let engine {
            let page = try engine.search(
                SearchQuery(text: query.text, origin: query.origin, bbox: query.bbox, categories: query.categories, limit: query.limit)
            )
            pois = page.results.compactMap { hit in
                guard case .poi(let poi) = hit.record else { return nil }
                return .poi(poi, distance: hit.distance)
            }
        }
        // A place named as typed, or a large one begun (a prefix scores 0.7, importance adds up to 0.4: a city of a
        // million reaches 1.0), leads; smaller places begun come last.
        // (A Chinese address whose divisions are followed by more — "北京lg" — does not lead: the rest is what was typed.)
        func leads(_ place: GeocodeResult) -> Bool {
            place.unresolved == nil && (place.namedAsTyped || place.score >= Self.leadingPlaceScore)
        }
        let leading = places.filter(leads)
        let otherPlaces = places.filter { !leads($0) }
        let houses = addresses.filter { $0.type == "house" }
        let streets = addresses.filter { $0.type != "house" }
        let streetsNamed = streets.filter { $0.score >= 1.0 }
        let streetsBegun = streets.filter { $0.score < 1.0 }
        let list: [GeocodeCandidate] =
            leading.map { .place($0) } + houses.map { .place($0) } + streetsNamed.map { .place($0) }
            + streetsBegun.prefix(Self.streetsBegunFirst).map { .place($0) } + pois
            + streetsBegun.dropFirst(Self.streetsBegunFirst).map { .place($0) }
            + otherPlaces.map { .place($0) }
        return Array(list.prefix(query.limit))
    }

    /// A place scoring this much (`Gazetteer.geocode`) leads the suggestions though only begun.
    static let leadingPlaceScore = 1.0
    /// Streets begun that come before the POIs.
    static let streetsBegunFirst = 3

}
