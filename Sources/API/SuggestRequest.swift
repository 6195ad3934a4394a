import BundledData
import Gazetteer
import GeoCore
import SearchEngine

/// GET /v1/suggest: what a search box suggests as the text is typed — POIs, houses and streets, and places in one
/// list (`Geocoder.suggest`). Parsed once for the HTTP server and the CLI (`poi suggest`).
public struct SuggestRequest: Sendable {
    public var query: SuggestQuery
    /// The system of `lat`/`lon`/`bbox` in and of the answer's positions.
    public var coordsys: CRS.Geographic

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        coordsys = try p.coordsys()
        guard let text = try p.text() else { throw ParameterError("q", "is required") }
        var sources = Set(SuggestQuery.Source.allCases)
        if let list = p.string("sources") {
            sources = []
            for item in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let source = SuggestQuery.Source(rawValue: String(item)) else {
                    throw ParameterError("sources", "must be a comma-separated list of poi, address and place")
                }
                sources.insert(source)
            }
        }
        let country = try p.string("country").map { code throws(ParameterError) -> String in
            guard code.count == 2, code.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw ParameterError("country", "must be an ISO 3166-1 alpha-2 code such as FI or CN")
            }
            return code.uppercased()
        }
        let language = try p.string("lang").map { lang throws(ParameterError) -> String in
            guard lang == "en" || lang == "zh" else { throw ParameterError("lang", "must be en or zh") }
            return lang
        }
        query = SuggestQuery(
            text: text,
            origin: try p.origin(required: false, coordsys: coordsys),
            bbox: try p.bbox(coordsys: coordsys),
            categories: try p.category().map { [$0] } ?? [],
            limit: try p.limit(default: 10),
            sources: sources,
            country: country,
            language: language
        )
    }

    /// `{"results": [...], "next": null}`: a POI as the record (`"kind": "poi"`) with its distance from the origin; a
    /// house or street (`"kind": "address"`) and a place (`"kind": "place"`) as geocoding answers them.
    public func encode(_ candidates: [GeocodeCandidate]) -> [UInt8] {
        let encoder = APIEncoder(coordsys: coordsys)
        var json = JSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for candidate in candidates {
            switch candidate {
            case .poi(let poi, let distance):
                encoder.write(.poi(poi), distance: distance, score: nil, to: &json)
            case .place(let place):
                let kind = place.type == "house" || place.type == "street" ? "address" : "place"
                var converted = place.converted(to: coordsys)
                if let origin = query.origin {
                    converted = converted.with(
                        distance: GreatCircle.distance(
                            latitude1: origin.latitude,
                            longitude1: origin.longitude,
                            latitude2: place.latitude,
                            longitude2: place.longitude
                        )
                    )
                }
                converted.write(to: &json, kind: kind)
            }
        }
        json.endArray()
        json.key("next")
        json.null()
        json.endObject()
        return json.buffer
    }
}
