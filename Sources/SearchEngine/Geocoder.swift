import Foundation
import Gazetteer
import GeoCore
import Records

/// One answer of a geocoder: a gazetteer place (a house, a street, a city…) or a POI.
public enum GeocodeCandidate: Sendable {
    case place(GeocodeResult)
    case poi(POIRecord, distance: Double?)

    public var latitude: Double {
        switch self {
        case .place(let p): return p.latitude
        case .poi(let p, _): return p.lat
        }
    }

    public var longitude: Double {
        switch self {
        case .place(let p): return p.longitude
        case .poi(let p, _): return p.lon
        }
    }

    public var country: String? {
        switch self {
        case .place(let p): return p.country
        case .poi(let p, _): return p.country
        }
    }
}

/// The one geocoder of a process, built once at start-up (`poi serve`: `buildApp`; the CLI: per command) and asked by
/// every surface — v1 `/v1/geocode`, `/v1/reverse` and `/v1/suggest`, Nominatim, Photon, AMap `geo`, `regeo` and
/// input tips, and `poi geocode`/`reverse`/`suggest`: places from the gazetteer, houses and streets from the address
/// book, POIs from the engine, in one ranking (docs/ARCHITECTURE.md, "Geocoding, on every surface").
///
/// The text is parsed once, into the query (`GeocodeQuery`'s address readings), and the readings are what every
/// address index is asked with. The address book is the engine's as the last background step indexed it
/// (`SearchEngine.addresses`): a read never builds one.
public final class Geocoder: Sendable {
    public let gazetteer: Gazetteer
    /// The POIs, and the address book they keep current (nil: a CLI reading places and addresses only).
    let engine: SearchEngine?
    /// The address book when there is no engine.
    let fixedAddresses: AddressBook

    public init(engine: SearchEngine, gazetteer: Gazetteer) {
        self.engine = engine
        self.gazetteer = gazetteer
        fixedAddresses = .empty
    }

    /// A geocoder of places, houses and streets only (no POIs): `poi geocode` and `poi reverse` over a database.
    public init(gazetteer: Gazetteer, addresses: AddressBook) {
        engine = nil
        self.gazetteer = gazetteer
        fixedAddresses = addresses
    }

    /// The houses and streets answers come from now.
    public var addresses: AddressBook { engine?.addresses ?? fixedAddresses }

    /// Places, houses and streets matching an address or place name, best first (no POIs): v1 `/v1/geocode` and
    /// `poi geocode`, and the first part of `search`.
    public func places(_ query: GeocodeQuery) -> [GeocodeResult] { gazetteer.geocode(query, addresses: addresses) }

    /// The place a point is in, its areas, and the nearest house or street (no POIs): v1 `/v1/reverse`, `poi
    /// reverse`, AMap `regeo`, and the first part of `reverse`.
    public func areas(around point: Coordinate) -> ReverseResult { gazetteer.reverse(point, addresses: addresses) }

    /// Places named by `text` as typed, then POIs matching its words, then weaker place matches. `asTyped`: the text is
    /// a search box's as it is typed (Photon's), so a house number begun is completed too — "Mannerheimintie 1"
    /// answers house 1, then 1A, 10, 11 … (`AddressIndex.complete`) before anything else.
    public func search(
        _ text: String,
        limit: Int,
        language: String?,
        near: Coordinate?,
        countries: Set<String>?,
        box: BoundingBox?,
        asTyped: Bool = false
    ) throws(GazetteerError) -> [GeocodeCandidate] {
        let wide = min(100, max(limit * 4, 20))
        let query = try GeocodeQuery(text: text, limit: wide, country: countries?.count == 1 ? countries!.first : nil, language: language, near: near)
        let addresses = addresses  // one book for the whole question
        var places = gazetteer.geocode(query, addresses: addresses)
        if asTyped {
            let completed = gazetteer.complete(query, addresses: addresses).filter { $0.type == "house" }
            if !completed.isEmpty {
                let leading = places.prefix { $0.type == "house" }
                let known = Set(leading.map(\.id))
                places = Array(leading) + completed.filter { !known.contains($0.id) } + places.dropFirst(leading.count).filter { $0.type != "house" }
            }
        }
        var results: [GeocodeCandidate] =
            places
            .filter { countries?.contains($0.country) ?? true }
            .filter { box?.contains(latitude: $0.latitude, longitude: $0.longitude) ?? true }
            .map { .place($0) }
        // POIs whose words match come after a place named as typed, and before a weak match (a prefix or a typo of
        // some place's name).
        // (A text without letters or digits finds no POI: then only places answer.)
        if let engine, let found = try? engine.search(SearchQuery(text: text, origin: near, bbox: box, limit: min(100, limit * 2))) {
            let pois: [GeocodeCandidate] = found.results.compactMap { hit in
                guard case .poi(let poi) = hit.record, countries?.contains(poi.country ?? "") ?? true else { return nil }
                return .poi(poi, distance: hit.distance)
            }
            let strong = results.prefix { candidate in
                guard case .place(let p) = candidate else { return false }
                return p.unresolved != nil || p.type == "house" || p.type == "street" || p.namedAsTyped
            }
            results = Array(strong) + pois + results.dropFirst(strong.count)
        }
        return Array(results.prefix(limit))
    }

    /// At building zoom (`poiRadius` given): the nearer of the POI within `poiRadius` metres and the house within
    /// `AddressIndex.houseRadius`, as Nominatim answers the nearest object; else the nearest street; else the place
    /// the point is in; nil at sea.
    public func reverse(_ point: Coordinate, poiRadius: Double?) -> GeocodeCandidate? {
        let answer = areas(around: point)
        if let poiRadius {
            let poi = engine?.nearby(NearbyQuery(Around(point, radius: poiRadius), limit: 1)).results.first
            if let house = answer.address, house.type == "house" {
                if let poi, case .poi(var record) = poi.record, poi.distance ?? .infinity <= house.distance ?? 0 {
                    // A POI without a house number of its own takes the house's when that house is near (it is
                    // likely the building the POI is in), as Nominatim gives a POI the address of its building —
                    // unless the POI names another street.
                    if let parts = house.address, house.distance ?? 0 <= 30, Self.lacksNumber(record.address, onStreet: parts.street) {
                        record.address = [parts.street, parts.housenumber].compactMap { $0 }.joined(separator: " ")
                    }
                    return .poi(record, distance: poi.distance)
                }
                return .place(house)
            }
            if let poi, case .poi(let record) = poi.record { return .poi(record, distance: poi.distance) }
        }
        if poiRadius != nil, let street = answer.address { return .place(street) }
        guard answer.country != nil, let place = answer.place else { return nil }
        return .place(place)
    }

    /// Whether a POI's address (its `addr:street` and `addr:housenumber` as one text) has no house number, and no
    /// street other than `street`.
    static func lacksNumber(_ address: String?, onStreet street: String?) -> Bool {
        guard let address = address?.trimmingCharacters(in: .whitespaces), !address.isEmpty else { return true }
        guard !address.contains(where: \.isNumber), let street else { return false }
        return address.compare(street, options: [.caseInsensitive, .diacriticInsensitive]) == .orderedSame
    }

    /// What is around `point` within `radius` metres, nearest first: POIs, with the nearest house or street among
    /// them by distance, then the place the point is in.
    public func around(_ point: Coordinate, radius: Double, limit: Int) -> [GeocodeCandidate] {
        let hits = engine?.nearby(NearbyQuery(Around(point, radius: radius), limit: min(limit, 100))).results ?? []
        var found: [GeocodeCandidate] = hits.compactMap { hit in
            guard case .poi(let poi) = hit.record else { return nil }
            return .poi(poi, distance: hit.distance)
        }
        let reverse = areas(around: point)
        if let address = reverse.address, let d = address.distance, d <= radius {
            let at = found.firstIndex { if case .poi(_, let pd) = $0 { return (pd ?? 0) > d } else { return true } } ?? found.count
            found.insert(.place(address), at: at)
            if found.count > limit { found.removeLast() }
        }
        if found.count < limit, let place = self.reverse(point, poiRadius: nil) { found.append(place) }
        return found
    }
}
