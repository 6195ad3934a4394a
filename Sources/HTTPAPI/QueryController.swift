import API
import Hummingbird
import SearchEngine

/// nearby, search, within, clusters: the wire layer parses the request, the engine answers, the request encodes.
struct QueryController {
    let engine: SearchEngine

    func register(on routes: RouteRegistrar) {
        routes.read("nearby", cost: .heavyWith(parameter: "q")) { input in
            let parsed = try NearbyRequest(input.parameters)
            return .encoded(parsed.encoder, parsed.encode(engine.nearby(parsed.query)))
        }
        routes.read("search", cost: .heavy) { input in
            let parsed = try SearchRequest(input.parameters)
            return .encoded(parsed.encoder, parsed.encode(try engine.search(parsed.query)))
        }
        routes.read("within", cost: .heavyWith(parameter: "q")) { input in
            let parsed = try WithinRequest(input.parameters)
            return .encoded(parsed.encoder, parsed.encode(engine.within(parsed.query)))
        }
        routes.read("clusters", cost: .heavy) { input in
            let parsed = try ClustersRequest(input.parameters)
            return .encoded(parsed.encoder, parsed.encode(try engine.clusters(parsed.query)))
        }
    }
}

/// An answer in the request's format, labelled application/geo+json for GeoJSON.
func answer(_ encoder: APIEncoder, _ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
    JSONResponse.body(bytes, status: status, geojson: encoder.format == .geojson)
}
