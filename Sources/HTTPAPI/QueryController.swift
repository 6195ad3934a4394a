import GeoCore
import Hummingbird
import SearchEngine

/// nearby, search, within, clusters: parse and validate, ask the engine, encode.
struct QueryController {
    let engine: SearchEngine

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/nearby") { request, _ in try nearby(request) }
        router.get("/v1/search") { request, _ in try search(request) }
        router.get("/v1/within") { request, _ in try within(request) }
        router.get("/v1/clusters") { request, _ in try clusters(request) }
    }

    func nearby(_ request: Request) throws -> Response {
        let p = Parameters(request)
        let coordsys = try p.coordsys()
        let format = try p.format()
        let query = try NearbyQuery(
            origin: try p.origin(required: true, coordsys: coordsys)!,
            radius: try p.double("radius", rule: "must be a number of metres greater than 0 and at most 1000000"),
            text: p.string("q"), category: p.string("category"), kind: try p.kind(), limit: try p.limit(), cursor: p.string("cursor")
        )
        let page = try engine.nearby(query)
        return JSONResponse.body(APIEncoder(coordsys: coordsys, format: format).page(page), geojson: format == .geojson)
    }

    func search(_ request: Request) throws -> Response {
        let p = Parameters(request)
        let coordsys = try p.coordsys()
        let format = try p.format()
        let box = try p.string("bbox").map { text throws -> BoundingBox in coordsys.toWGS84(try BoundingBox(parsing: text)) }
        let query = try SearchQuery(
            text: try p.required("q"), origin: try p.origin(required: false, coordsys: coordsys), bbox: box, category: p.string("category"),
            kind: try p.kind(), limit: try p.limit(), offset: try p.int("offset", rule: "must be an integer between 0 and 10000") ?? 0
        )
        let page = try engine.search(query)
        return JSONResponse.body(APIEncoder(coordsys: coordsys, format: format).page(page), geojson: format == .geojson)
    }

    func within(_ request: Request) throws -> Response {
        let p = Parameters(request)
        let coordsys = try p.coordsys()
        let format = try p.format()
        let area: WithinQuery.Area
        switch (p.string("bbox"), p.string("polygon")) {
        case (let bbox?, nil): area = .box(coordsys.toWGS84(try BoundingBox(parsing: bbox)))
        case (nil, let polygon?): area = .polygon(coordsys.toWGS84(try Polygon(parsing: polygon)))
        case (nil, nil): throw Problem.badRequest("bbox or polygon is required")
        default: throw Problem.badRequest("bbox and polygon must not both be given")
        }
        let query = try WithinQuery(
            area: area, text: p.string("q"), category: p.string("category"), kind: try p.kind(), limit: try p.limit(), cursor: p.string("cursor")
        )
        let page = try engine.within(query)
        return JSONResponse.body(APIEncoder(coordsys: coordsys, format: format).page(page), geojson: format == .geojson)
    }

    func clusters(_ request: Request) throws -> Response {
        let p = Parameters(request)
        let coordsys = try p.coordsys()
        let format = try p.format()
        let box = coordsys.toWGS84(try BoundingBox(parsing: try p.required("bbox")))
        guard let precision = try p.int("precision", rule: "must be an integer between 1 and 12") else {
            throw Problem.badRequest("precision is required (an integer between 1 and 12)")
        }
        let query = try ClusterQuery(bbox: box, precision: precision, text: p.string("q"), category: p.string("category"), kind: try p.kind())
        let clusters = try engine.clusters(query)
        return JSONResponse.body(APIEncoder(coordsys: coordsys, format: format).clusters(clusters), geojson: format == .geojson)
    }
}
