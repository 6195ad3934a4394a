import BundledData
import Foundation
import Gazetteer
import GeoCore
import Records
import SearchEngine

extension AMapAdapter {
    /// `GET /v3/assistant/inputtips`: what AMap's search box asks on every keystroke, answered by the suggestions of
    /// v1 (`Geocoder.suggest`: POIs by keyword and pinyin, houses and streets as typed, places), in AMap's shape.
    ///
    /// Parameters: `keywords` (required), `type` or `types` (typecodes or Chinese names, `|`-separated: POIs of those
    /// types only, no addresses or places), `location` ("lng,lat" in GCJ-02: nearer first), `city` (name, citycode or adcode: favoured, and with
    /// `citylimit=true` required — within 60 km of its seat), `datatype` (`all`, `poi`, `bus`: bus stops only,
    /// `busline`: none here; several `|`-separated). Each tip has `id`, `name`, `district`, `adcode`, `location`
    /// (GCJ-02), `address` and `typecode`; a value the tip lacks is an empty array, as AMap writes it.
    func inputTips(_ p: QueryParameters) throws -> (inout JSONWriter) -> Void {
        guard let keywords = Self.keywords(p) else { throw AMapError.missing("keywords") }
        guard let geocoder else { throw AMapError(info: "SERVICE_NOT_AVAILABLE", infocode: "20003", detail: "the gazetteer is not loaded") }
        var categories: [String] = []
        if let text = p.string("type") ?? p.string("types"), !text.isEmpty {
            for item in text.split(separator: "|").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                let matches = types.categories(for: item)
                guard !matches.isEmpty else { throw AMapError.invalid("type: \(item) names no category of this server") }
                categories += matches
            }
        }
        var sources = Set(SuggestQuery.Source.allCases)
        if let text = p.string("datatype"), !text.isEmpty {
            sources = []
            for item in text.lowercased().split(separator: "|") {
                switch item {
                case "all": sources.formUnion(SuggestQuery.Source.allCases)
                case "poi": sources.insert(.poi)
                case "bus":
                    sources.insert(.poi)
                    categories.append("transport.bus_stop")
                case "busline": break
                default: throw AMapError.invalid("datatype must be all, poi, bus or busline")
                }
            }
        }
        // Tips of the types asked are POIs of those types.
        if !categories.isEmpty { sources = sources.intersection([.poi]) }
        var origin = try p.string("location").flatMap { $0.isEmpty ? nil : try Self.location($0, name: "location") }
        let city = cityOrigin(p.string("city"))
        if p.string("city").map({ !$0.isEmpty }) == true && city == nil {
            throw AMapError.invalid("city: \(p.string("city")!) names no city of this server")
        }
        let cityLimit = (p.string("citylimit") ?? "false").lowercased() == "true"
        let box = cityLimit ? city.map { Self.box(around: $0, metres: 60_000) } : nil
        origin = origin ?? city
        let query = SuggestQuery(
            text: keywords,
            origin: origin,
            bbox: box,
            categories: Array(Set(categories)).sorted(),
            limit: 10,
            sources: sources,
            language: "zh"
        )
        let found = try geocoder.suggest(query).filter { candidate in
            guard let box else { return true }
            return box.contains(latitude: candidate.latitude, longitude: candidate.longitude)
        }
        return { json in
            json.field("count", String(found.count))
            json.key("tips")
            json.beginArray()
            for candidate in found { writeTip(candidate, to: &json) }
            json.endArray()
        }
    }

    /// One tip; a value it lacks written `[]`, as AMap does.
    private func writeTip(_ candidate: GeocodeCandidate, to json: inout JSONWriter) {
        func field(_ key: StaticString, _ value: String?) {
            json.key(key)
            if let value, !value.isEmpty {
                json.string(value)
            } else {
                json.beginArray()
                json.endArray()
            }
        }
        let division = gazetteer?.division(at: Coordinate(uncheckedLatitude: candidate.latitude, longitude: candidate.longitude))
        let district = division?.label ?? ""
        let location = Self.format((candidate.latitude, candidate.longitude))
        json.beginObject()
        switch candidate {
        case .poi(let poi, _):
            field("id", poi.id)
            field("name", poi.name)
            field("district", district)
            field("adcode", division?.adcode)
            field("location", location)
            field("address", poi.address)
            field("typecode", types.type(of: poi.category).code)
        case .place(let place):
            let isAddress = place.type == "house" || place.type == "street"
            field("id", isAddress ? place.id : nil)
            field("name", place.name)
            field("district", district.isEmpty ? [place.admin1, place.admin2].filter { !$0.isEmpty }.joined() : district)
            field("adcode", place.adcode ?? division?.adcode)
            field("location", location)
            field("address", isAddress ? place.address?.street : nil)
            // AMap's typecodes of 地名地址信息: 门牌信息, 道路名, 行政地名.
            field("typecode", place.type == "house" ? "190403" : place.type == "street" ? "190301" : "190100")
        }
        json.endObject()
    }
}
