import API
import Hummingbird
import SearchEngine

/// nearby, search, within, clusters: the wire layer parses the request, the engine answers, the request encodes.
struct QueryController {
    let engine: SearchEngine

    func register(on routes: RouteRegistrar) {
        routes.on("nearby") { request, _ in
            let parsed = try NearbyRequest(RequestParameters(request))
            return answer(parsed.encoder, parsed.encode(engine.nearby(parsed.query)))
        }
        routes.on("search") { request, _ in
            let parsed = try SearchRequest(RequestParameters(request))
            return answer(parsed.encoder, parsed.encode(try engine.search(parsed.query)))
        }
        routes.on("within") { request, _ in
            let parsed = try WithinRequest(RequestParameters(request))
            return answer(parsed.encoder, parsed.encode(engine.within(parsed.query)))
        }
        routes.on("clusters") { request, _ in
            let parsed = try ClustersRequest(RequestParameters(request))
            return answer(parsed.encoder, parsed.encode(try engine.clusters(parsed.query)))
        }
    }
}

/// An answer in the request's format, labelled application/geo+json for GeoJSON.
func answer(_ encoder: APIEncoder, _ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
    JSONResponse.body(bytes, status: status, geojson: encoder.format == .geojson)
}
