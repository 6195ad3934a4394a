import BundledData
import Foundation
import Gazetteer
import GeoCore
import HTTPTypes
import Records
import SearchEngine
import TextIndex

/// Nominatim (`/nominatim/search`, `/reverse`, `/status`) and Photon (`/photon/api`, `/reverse`) over the same
/// gazetteer and catalog as v1, in their wire formats, so that geopy and other clients work by changing only their
/// base URL. Places come from the gazetteer; a query the gazetteer cannot place falls back to POI names, as a map
/// search would. Each answers errors in its own shape (Nominatim `{"error":{"code","message"}}`, Photon
/// `{"message"}`), not problem+json.
public struct GeocoderAdapters: Sendable {
    let engine: SearchEngine
    /// The process's one geocoder (nil: no gazetteer is loaded, and every operation but `status` answers 503).
    let geocoder: Geocoder?
    var gazetteer: Gazetteer? { geocoder?.gazetteer }

    static let licence = "Data © OpenStreetMap contributors, ODbL 1.0 (POIs); GeoNames, CC BY 4.0 (places)"

    public init(engine: SearchEngine, geocoder: Geocoder?) {
        self.engine = engine
        self.geocoder = geocoder
    }

    /// The operations, by operationId of the route table: each a function of the query string.
    public var operations: [(operationId: String, answer: @Sendable (QueryParameters) -> AdapterAnswer)] {
        [
            ("nominatimSearch", { p in nominatim { try nominatimSearch(p) } }),
            ("nominatimReverse", { p in nominatim { try nominatimReverse(p) } }),
            ("nominatimStatus", { p in nominatim { try nominatimStatus(p) } }),
            ("photonSearch", { p in photon { try photonSearch(p) } }),
            ("photonReverse", { p in photon { try photonReverse(p) } }),
        ]
    }

    // MARK: Errors in each service's shape

    struct AdapterError: Error {
        let status: HTTPResponse.Status
        let message: String
    }

    private func nominatim(_ body: () throws -> AdapterAnswer) -> AdapterAnswer {
        do { return try body() } catch {
            return errorResponse(error) { message, code in
                var json = JSONWriter()
                json.beginObject()
                json.key("error")
                json.beginObject()
                json.field("code", code)
                json.field("message", message)
                json.endObject()
                json.endObject()
                return json.buffer
            }
        }
    }

    private func photon(_ body: () throws -> AdapterAnswer) -> AdapterAnswer {
        do { return try body() } catch {
            return errorResponse(error) { message, _ in
                var json = JSONWriter()
                json.beginObject()
                json.field("message", message)
                json.endObject()
                return json.buffer
            }
        }
    }

    private func errorResponse(_ error: any Error, _ encode: (String, Int) -> [UInt8]) -> AdapterAnswer {
        let (status, message): (HTTPResponse.Status, String)
        switch error {
        case let error as AdapterError: (status, message) = (error.status, error.message)
        case let error as ParameterError: (status, message) = (.badRequest, error.description)
        case let error as GazetteerError: (status, message) = (.badRequest, error.description)
        case let error as SearchError: (status, message) = (.badRequest, error.description)
        case let error as GeoError: (status, message) = (.badRequest, error.description)
        default: (status, message) = (.internalServerError, "the request could not be completed")
        }
        return AdapterAnswer.json(encode(message, status.code), status: status)
    }

    private func requireGeocoder() throws -> Geocoder {
        guard let geocoder else { throw AdapterError(status: .serviceUnavailable, message: "the gazetteer is not loaded on this server") }
        return geocoder
    }

    typealias Candidate = GeocodeCandidate

    // MARK: Parameters

    /// Nominatim's flags: anything but "0" is true (so geopy's `extratags=True` is true).
    static func flag(_ parameters: QueryParameters, _ name: String) -> Bool {
        guard let value = parameters.string(name) else { return false }
        return value != "0"
    }

    static func coordinate(_ parameters: QueryParameters, _ name: String, range: ClosedRange<Double>) throws -> Double? {
        guard let text = parameters.string(name) else { return nil }
        guard let value = DecimalNumber.parse(Substring(TextNormalizer.trimmed(text))), range.contains(value) else {
            throw AdapterError(
                status: .badRequest,
                message: "Parameter '\(name)' must be a number between \(Int(range.lowerBound)) and \(Int(range.upperBound))."
            )
        }
        return value
    }

    static func limit(_ parameters: QueryParameters, default value: Int, maximum: Int) throws -> Int {
        guard let text = parameters.string("limit") else { return value }
        guard let limit = DecimalNumber.parseInteger(Substring(text)), limit >= 1 else {
            throw AdapterError(status: .badRequest, message: "Parameter 'limit' must be a positive integer.")
        }
        return min(limit, maximum)
    }

    /// "minLon,minLat,maxLon,maxLat" (either corner order, as Nominatim takes it).
    static func box(_ text: String, name: String) throws -> BoundingBox {
        let numbers = text.split(separator: ",").map { DecimalNumber.parse(TextNormalizer.trimmed($0)[...]) }
        guard numbers.count == 4, let x1 = numbers[0], let y1 = numbers[1], let x2 = numbers[2], let y2 = numbers[3],
            let box = try? BoundingBox(west: min(x1, x2), south: min(y1, y2), east: max(x1, x2), north: max(y1, y2))
        else {
            throw AdapterError(status: .badRequest, message: "Parameter '\(name)' must be four numbers: minLon,minLat,maxLon,maxLat.")
        }
        return box
    }

    static func language(_ text: String?) -> String? {
        guard let text else { return nil }
        return text.lowercased().hasPrefix("zh") ? "zh" : nil
    }

    /// A stable positive integer id for a record (OpenStreetMap node ids are kept as they are).
    static func numericID(_ id: String) -> Int {
        if id.hasPrefix("osm-n"), let n = Int(id.dropFirst(5)) { return n }
        if id.hasPrefix("geonames:"), let n = Int(id.dropFirst(9)) { return n }
        if id.hasPrefix("adcode:"), let n = Int(id.dropFirst(7)) { return n }
        return Int(FNV1a.hash(id) & 0x1F_FFFF_FFFF_FFFF)  // within 2^53, exact in every JSON parser
    }

    /// A POI's "Street 13 A" as road "Street" and house number "13 A" (the number: from the first word that starts
    /// with a digit, when a word before it names the street).
    static func splitAddress(_ address: String?) -> (road: String?, number: String?) {
        guard let address else { return (nil, nil) }
        let words = address.split(separator: " ")
        guard let k = words.firstIndex(where: { $0.first?.isNumber == true }), k > 0 else { return (address, nil) }
        return (words[..<k].joined(separator: " "), words[k...].joined(separator: " "))
    }

    /// The OpenStreetMap object of a POI, house or street (`osm-n…`, `osm-w…`, `osm-r…`): Nominatim's osm_type and id.
    static func osmObject(_ candidate: Candidate) -> (type: String, id: Int)? {
        let id: String
        switch candidate {
        case .poi(let poi, _): id = poi.id
        case .place(let place): id = place.id
        }
        guard id.hasPrefix("osm-"), id.count > 5, let number = Int(id.dropFirst(5).prefix { $0.isNumber }) else { return nil }
        switch id.dropFirst(4).first {
        case "n": return ("node", number)
        case "w": return ("way", number)
        case "r": return ("relation", number)
        default: return nil
        }
    }

    /// OSM-style key and value for a POI category ("food.cafe" → amenity/cafe).
    static func osmTag(category: String) -> (key: String, value: String) {
        let parts = category.split(separator: ".").map(String.init)
        let value = parts.last ?? category
        switch parts.first {
        case "shop": return ("shop", value)
        case "tourism": return ("tourism", value)
        case "leisure": return ("leisure", value)
        case "office": return ("office", value)
        case "transport": return (["subway_station", "train_station", "station"].contains(value) ? "railway" : "public_transport", value)
        case "historic": return ("historic", value)
        default: return ("amenity", value)
        }
    }

    static func fixed7(_ value: Double) -> String { String(format: "%.7f", value) }

    // MARK: Nominatim

    private enum NominatimFormat: String {
        case json, jsonv2, geojson
    }

    private func nominatimFormat(_ parameters: QueryParameters, default value: NominatimFormat) throws -> NominatimFormat {
        guard let text = parameters.string("format") else { return value }
        guard let format = NominatimFormat(rawValue: text) else {
            throw AdapterError(status: .badRequest, message: "Parameter 'format' must be one of: json, jsonv2, geojson.")
        }
        return format
    }

    func nominatimSearch(_ p: QueryParameters) throws -> AdapterAnswer {
        let format = try nominatimFormat(p, default: .jsonv2)
        var text = p.string("q").map { TextNormalizer.trimmed($0) } ?? ""
        if text.isEmpty {
            // Structured search: the parts, most specific first, as one address.
            text = ["amenity", "street", "city", "county", "state", "country", "postalcode"]
                .compactMap { p.string($0).map { TextNormalizer.trimmed($0) } }.filter { !$0.isEmpty }.joined(separator: ", ")
        }
        guard !text.isEmpty else {
            throw AdapterError(status: .badRequest, message: "Nominatim needs a query: q, or street, city, county, state, country, postalcode.")
        }
        let limit = try Self.limit(p, default: 10, maximum: 50)
        let countries = p.string("countrycodes").map {
            Set($0.split(separator: ",").map { TextNormalizer.trimmed($0).uppercased() }.filter { !$0.isEmpty })
        }
        let viewbox = try p.string("viewbox").map { try Self.box($0, name: "viewbox") }
        let bounded = Self.flag(p, "bounded")
        let near = viewbox.map { Coordinate(uncheckedLatitude: ($0.south + $0.north) / 2, longitude: ($0.west + $0.east) / 2) }
        let found = try requireGeocoder().search(
            text,
            limit: limit,
            language: Self.language(p.string("accept-language")),
            near: near,
            countries: countries?.isEmpty == false ? countries : nil,
            box: bounded ? viewbox : nil
        )
        let details = (address: Self.flag(p, "addressdetails"), extratags: Self.flag(p, "extratags"), namedetails: Self.flag(p, "namedetails"))
        var json = JSONWriter()
        if format == .geojson {
            nominatimCollection(found, details: details, to: &json)
        } else {
            json.beginArray()
            for candidate in found { nominatimPlace(candidate, format: format, details: details, to: &json) }
            json.endArray()
        }
        return AdapterAnswer.json(json.buffer)
    }

    func nominatimReverse(_ p: QueryParameters) throws -> AdapterAnswer {
        let format = try nominatimFormat(p, default: .json)
        guard let lat = try Self.coordinate(p, "lat", range: -90...90) else {
            throw AdapterError(status: .badRequest, message: "Parameter 'lat' missing.")
        }
        guard let lon = try Self.coordinate(p, "lon", range: -180...180) else {
            throw AdapterError(status: .badRequest, message: "Parameter 'lon' missing.")
        }
        let zoom =
            try p.int("zoom", rule: "must be an integer from 0 to 18").map { zoom in
                guard (0...18).contains(zoom) else {
                    throw AdapterError(status: .badRequest, message: "Parameter 'zoom' must be a number between 0 and 18.")
                }
                return zoom
            } ?? 18
        let details = (
            address: p.string("addressdetails").map { $0 != "0" } ?? true, extratags: Self.flag(p, "extratags"),
            namedetails: Self.flag(p, "namedetails")
        )
        guard let candidate = try requireGeocoder().reverse(Coordinate(uncheckedLatitude: lat, longitude: lon), poiRadius: zoom >= 17 ? 100 : nil)
        else {
            return AdapterAnswer.json(Array(#"{"error":"Unable to geocode"}"#.utf8))
        }
        var json = JSONWriter()
        if format == .geojson {
            nominatimCollection([candidate], details: details, to: &json)
        } else {
            nominatimPlace(candidate, format: format, details: details, to: &json)
        }
        return AdapterAnswer.json(json.buffer)
    }

    func nominatimStatus(_ p: QueryParameters) throws -> AdapterAnswer {
        if p.string("format") == "json" {
            let counts = engine.counts
            var json = JSONWriter()
            json.beginObject()
            json.field("status", 0)
            json.field("message", "OK")
            json.field("software_version", "poi-search (Nominatim-compatible subset)")
            json.field("pois", counts.pois)
            json.endObject()
            return AdapterAnswer.json(json.buffer)
        }
        return AdapterAnswer(status: .ok, contentType: "text/plain; charset=utf-8", body: Array("OK".utf8))
    }

    private typealias Details = (address: Bool, extratags: Bool, namedetails: Bool)

    /// The address object of a candidate: OSM-style labels.
    private func address(_ candidate: Candidate) -> [(String, String)] {
        var fields: [(String, String)] = []
        func add(_ key: String, _ value: String?) {
            if let value, !value.isEmpty, !fields.contains(where: { $0.0 == key }) { fields.append((key, value)) }
        }
        switch candidate {
        case .place(let place) where place.address != nil:
            let parts = place.address!
            add("house_number", parts.housenumber)
            add("road", parts.street)
            add("city", parts.city)
            add("county", place.admin2)
            add("state", place.admin1)
            add("postcode", parts.postcode)
            add("country", gazetteer?.countryName(place.country))
            add("country_code", place.country.lowercased())
        case .place(let place):
            add(place.type == "district" ? "city_district" : "city", place.name)
            add("county", place.admin2)
            add("state", place.admin1)
            add("country", gazetteer?.countryName(place.country))
            add("country_code", place.country.lowercased())
        case .poi(let poi, _):
            let tag = Self.osmTag(category: poi.category)
            add(tag.value, poi.name)
            let (road, number) = Self.splitAddress(poi.address)
            add("house_number", number)
            add("road", road)
            add("city", poi.city)
            if let country = poi.country {
                add("country", gazetteer?.countryName(country))
                add("country_code", country.lowercased())
            }
        }
        return fields
    }

    private func displayName(_ candidate: Candidate) -> String {
        switch candidate {
        case .place(let place): return place.displayName
        case .poi(let poi, _):
            var parts = [poi.name]
            for part in [poi.address, poi.city, poi.country.flatMap { gazetteer?.countryName($0) }] {
                if let part, !part.isEmpty, !parts.contains(part) { parts.append(part) }
            }
            return parts.joined(separator: ", ")
        }
    }

    private func nominatimPlace(_ candidate: Candidate, format: NominatimFormat, details: Details, to json: inout JSONWriter) {
        json.beginObject()
        writeNominatimProperties(candidate, format: format, details: details, to: &json)
        json.key("boundingbox")
        let (dy, dx) = halfExtent(candidate)
        json.beginArray()
        for value in [candidate.latitude - dy, candidate.latitude + dy, candidate.longitude - dx, candidate.longitude + dx] {
            json.string(Self.fixed7(value))
        }
        json.endArray()
        json.endObject()
    }

    private func halfExtent(_ candidate: Candidate) -> (Double, Double) {
        switch candidate {
        case .place(let place) where place.address != nil: return (0.0002, 0.0004)
        case .place(let place):
            let radius = 20 * Double(max(place.population ?? 10_000, 1_000)).squareRoot()
            let dy = radius / 111_320
            return (dy, dy / max(0.01, cos(place.latitude * .pi / 180)))
        case .poi: return (0.0005, 0.0005)
        }
    }

    private func writeNominatimProperties(_ candidate: Candidate, format: NominatimFormat, details: Details, to json: inout JSONWriter) {
        let id: Int
        let name: String
        let tag: (key: String, value: String)
        let rank: Int
        let importance: Double
        switch candidate {
        case .place(let place) where place.address != nil:
            // A house (class place, type house, rank 30) or a street (highway, rank 26), as Nominatim answers them.
            id = Self.numericID(place.id)
            name = place.type == "house" ? (place.address?.housenumber ?? place.name) : place.name
            tag = place.type == "house" ? ("place", "house") : ("highway", "residential")
            rank = place.type == "house" ? 30 : 26
            importance = min(1, max(0, place.score / 4))
        case .place(let place):
            id = Self.numericID(place.id)
            name = place.name
            tag = place.type == "city" ? ("place", (place.population ?? 0) >= 100_000 ? "city" : "town") : ("boundary", "administrative")
            rank = place.type == "province" ? 8 : place.type == "district" ? 12 : 16
            importance = min(1, max(0, place.score / 3))
        case .poi(let poi, _):
            id = Self.numericID(poi.id)
            name = poi.name
            tag = Self.osmTag(category: poi.category)
            rank = 30
            importance = 0.1
        }
        json.field("place_id", id)
        json.field("licence", Self.licence)
        if let osm = Self.osmObject(candidate) {
            // Only OpenStreetMap records carry OSM ids; gazetteer places are GeoNames' (place_id is theirs).
            json.field("osm_type", osm.type)
            json.field("osm_id", osm.id)
        }
        if format != .geojson {
            json.field("lat", Self.fixed7(candidate.latitude))
            json.field("lon", Self.fixed7(candidate.longitude))
        }
        json.field(format == .json ? "class" : "category", tag.key)
        json.field("type", tag.value)
        json.field("place_rank", rank)
        json.field("importance", (importance * 1_000).rounded() / 1_000)
        // Nominatim's addresstype: "road" for a street, "place" for a house number, the place type for a place.
        let addresstype =
            tag.key == "highway"
            ? "road" : tag == ("place", "house") ? "place" : tag.key == "place" ? tag.value : tag.key == "boundary" ? "city_district" : tag.key
        json.field("addresstype", addresstype)
        json.field("name", name)
        json.field("display_name", displayName(candidate))
        if details.address {
            json.key("address")
            json.beginObject()
            for (key, value) in address(candidate) { json.field(text: key, value) }
            json.endObject()
        }
        if details.extratags {
            json.key("extratags")
            json.beginObject()
            if case .poi(let poi, _) = candidate { for (key, value) in poi.tags.sorted(by: { $0.key < $1.key }) { json.field(text: key, value) } }
            if case .place(let place) = candidate, let population = place.population { json.field("population", String(population)) }
            json.endObject()
        }
        if details.namedetails {
            json.key("namedetails")
            json.beginObject()
            json.field("name", name)
            json.endObject()
        }
    }

    private func nominatimCollection(_ candidates: [Candidate], details: Details, to json: inout JSONWriter) {
        json.featureCollection(
            candidates,
            members: { $0.field("licence", Self.licence) },
            feature: { candidate, json in
                json.key("properties")
                json.beginObject()
                writeNominatimProperties(candidate, format: .geojson, details: details, to: &json)
                json.endObject()
                let (dy, dx) = halfExtent(candidate)
                json.key("bbox")
                json.beginArray()
                for value in [candidate.longitude - dx, candidate.latitude - dy, candidate.longitude + dx, candidate.latitude + dy] {
                    json.number(value)
                }
                json.endArray()
                json.pointGeometry(latitude: candidate.latitude, longitude: candidate.longitude)
            }
        )
    }

    // MARK: Photon

    func photonSearch(_ p: QueryParameters) throws -> AdapterAnswer {
        guard let text = p.string("q").map({ TextNormalizer.trimmed($0) }), !text.isEmpty else {
            throw AdapterError(status: .badRequest, message: "missing search term 'q': /?q=berlin")
        }
        let limit = try Self.limit(p, default: 15, maximum: 50)
        let lat = try Self.coordinate(p, "lat", range: -90...90)
        let lon = try Self.coordinate(p, "lon", range: -180...180)
        guard (lat == nil) == (lon == nil) else { throw AdapterError(status: .badRequest, message: "lat and lon must be given together") }
        let near = lat.map { Coordinate(uncheckedLatitude: $0, longitude: lon!) }
        let box = try p.string("bbox").map { try Self.box($0, name: "bbox") }
        let tags = p.source.filter { $0.key == "osm_tag" }.map { String($0.value) }
        let found = try requireGeocoder().search(
            text,
            limit: tags.isEmpty ? limit : 100,
            language: Self.language(p.string("lang")),
            near: near,
            countries: nil,
            box: box,
            asTyped: true
        )
        .filter { candidate in tags.allSatisfy { Self.photonTag($0, matches: photonTag(candidate)) } }
        var json = JSONWriter()
        photonCollection(Array(found.prefix(limit)), to: &json)
        return AdapterAnswer.json(json.buffer)
    }

    func photonReverse(_ p: QueryParameters) throws -> AdapterAnswer {
        guard let lat = try Self.coordinate(p, "lat", range: -90...90), let lon = try Self.coordinate(p, "lon", range: -180...180) else {
            throw AdapterError(status: .badRequest, message: "missing search term 'lat' and/or 'lon': /?lat=51.5&lon=8.0")
        }
        let limit = try Self.limit(p, default: 1, maximum: 50)
        let radius =
            try p.double("radius", rule: "must be a number of kilometres").map { radius in
                guard radius > 0, radius <= 100 else { throw AdapterError(status: .badRequest, message: "radius must be between 0 and 100 km") }
                return radius
            } ?? 1
        let found = try requireGeocoder().around(Coordinate(uncheckedLatitude: lat, longitude: lon), radius: radius * 1_000, limit: limit)
        var json = JSONWriter()
        photonCollection(found, to: &json)
        return AdapterAnswer.json(json.buffer)
    }

    /// `osm_tag` filters: `key`, `key:value`, `:value`, each negated by a leading `!`.
    static func photonTag(_ filter: String, matches tag: (key: String, value: String)) -> Bool {
        var filter = Substring(filter)
        let negated = filter.hasPrefix("!")
        if negated { filter = filter.dropFirst() }
        let parts = filter.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let keyMatches = parts[0].isEmpty || parts[0] == tag.key
        let valueMatches = parts.count < 2 || parts[1].isEmpty || parts[1] == tag.value
        return (keyMatches && valueMatches) != negated
    }

    func photonTag(_ candidate: Candidate) -> (key: String, value: String) {
        switch candidate {
        case .place(let place) where place.address != nil:
            return place.type == "house" ? ("place", "house") : ("highway", "residential")
        case .place(let place):
            return place.type == "city" ? ("place", (place.population ?? 0) >= 100_000 ? "city" : "town") : ("boundary", "administrative")
        case .poi(let poi, _): return Self.osmTag(category: poi.category)
        }
    }

    private func photonCollection(_ candidates: [Candidate], to json: inout JSONWriter) {
        json.featureCollection(candidates) { candidate, json in
            json.key("properties")
            json.beginObject()
            let tag = photonTag(candidate)
            switch candidate {
            case .place(let place) where place.address != nil:
                let parts = place.address!
                if let osm = Self.osmObject(candidate) {
                    json.field("osm_type", String(osm.type.prefix(1)).uppercased())
                    json.field("osm_id", osm.id)
                }
                json.field("osm_key", tag.key)
                json.field("osm_value", tag.value)
                json.field("type", place.type)
                if place.type == "street" { json.field("name", parts.street ?? place.name) }
                if let number = parts.housenumber { json.field("housenumber", number) }
                if let street = parts.street { json.field("street", street) }
                if let postcode = parts.postcode { json.field("postcode", postcode) }
                if let city = parts.city { json.field("city", city) }
                if !place.admin1.isEmpty { json.field("state", place.admin1) }
                if let country = gazetteer?.countryName(place.country) { json.field("country", country) }
                if !place.country.isEmpty { json.field("countrycode", place.country) }
            case .place(let place):
                json.field("osm_key", tag.key)
                json.field("osm_value", tag.value)
                json.field("type", place.type == "city" ? "city" : place.type == "province" ? "state" : "district")
                json.field("name", place.name)
                if !place.admin2.isEmpty { json.field("county", place.admin2) }
                if !place.admin1.isEmpty { json.field("state", place.admin1) }
                if let country = gazetteer?.countryName(place.country) { json.field("country", country) }
                json.field("countrycode", place.country)
                let (dy, dx) = halfExtent(candidate)
                json.key("extent")
                json.beginArray()
                for value in [place.longitude - dx, place.latitude + dy, place.longitude + dx, place.latitude - dy] { json.number(value) }
                json.endArray()
            case .poi(let poi, _):
                if poi.id.hasPrefix("osm-n") {
                    json.field("osm_type", "N")
                    json.field("osm_id", Self.numericID(poi.id))
                }
                json.field("osm_key", tag.key)
                json.field("osm_value", tag.value)
                json.field("type", "house")
                json.field("name", poi.name)
                if let street = poi.address, !street.isEmpty { json.field("street", street) }
                if let city = poi.city, !city.isEmpty { json.field("city", city) }
                if let country = poi.country {
                    if let name = gazetteer?.countryName(country) { json.field("country", name) }
                    json.field("countrycode", country)
                }
            }
            json.endObject()
            json.pointGeometry(latitude: candidate.latitude, longitude: candidate.longitude)
        }
    }
}
