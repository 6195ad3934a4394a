import Catalog
import Foundation
import GeoCore
import Hummingbird
import SearchEngine

/// POIs and pins: reads, and writes that are durable before the 2xx is sent.
struct RecordController {
    let engine: SearchEngine
    let write: WriteAuthorization
    let maximumBodySize: Int

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/pois/:id") { request, context in try getPOI(request, context) }
        router.put("/v1/pois/:id") { request, context in try await putPOI(request, context) }
        router.delete("/v1/pois/:id") { request, context in try deletePOI(request, context) }
        router.get("/v1/pins") { request, _ in try listPins(request) }
        router.post("/v1/pins") { request, _ in try await createPin(request) }
        router.get("/v1/pins/:id") { request, context in try getPin(request, context) }
        router.put("/v1/pins/:id") { request, context in try await updatePin(request, context) }
        router.delete("/v1/pins/:id") { request, context in try deletePin(request, context) }
    }

    private func encoder(_ request: Request) throws -> APIEncoder {
        let p = Parameters(request)
        return APIEncoder(coordsys: try p.coordsys(), format: try p.format())
    }

    private func id(_ context: BasicRequestContext) throws(Problem) -> String {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.count <= 200 else { throw .badRequest("id must be 1 to 200 characters") }
        return id
    }

    func getPOI(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let id = try id(context)
        guard let poi = engine.poi(id: id) else { throw SearchError.notFound(kind: "poi", id: id) }
        return JSONResponse.body(try encoder(request).record(.poi(poi)))
    }

    func putPOI(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try write.check(request)
        let id = try id(context)
        let coordsys = try Parameters(request).coordsys()
        let body = try await JSONBody.object(request, limit: maximumBodySize)
        if let given = body["id"] as? String, given != id { throw Problem.badRequest("id in the body must match the path (or be left out)") }
        let position = try JSONBody.position(body, coordsys: coordsys)
        var tags: [String: String] = [:]
        if let raw = body["tags"] {
            guard let object = raw as? [String: Any] else { throw Problem.badRequest("tags must be an object of strings") }
            for (key, value) in object {
                guard let text = value as? String else { throw Problem.badRequest("tags.\(key) must be a string") }
                tags[key] = text
            }
        }
        let existed = engine.poi(id: id) != nil
        let poi = POIRecord(
            id: id, name: try JSONBody.string(body, "name", required: true)!, category: try JSONBody.string(body, "category", required: true)!,
            address: try JSONBody.string(body, "address"), city: try JSONBody.string(body, "city"), country: try JSONBody.string(body, "country"),
            lat: position.latitude, lon: position.longitude, tags: tags
        )
        let saved = try engine.upsertPOI(poi)
        return JSONResponse.body(try encoder(request).record(.poi(saved)), status: existed ? .ok : .created)
    }

    func deletePOI(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try write.check(request)
        try engine.deletePOI(id: try id(context))
        return Response(status: .noContent)
    }

    func listPins(_ request: Request) throws -> Response {
        let p = Parameters(request)
        let limit = try p.limit()
        let skip = try p.int("skip", rule: "must be a non-negative integer") ?? 0
        let order: PinOrder
        if let text = p.string("order") {
            guard let parsed = PinOrder(rawValue: text) else { throw Problem.badRequest("order must be one of -updatedAt, updatedAt, -createdAt, createdAt") }
            order = parsed
        } else {
            order = .updatedAtDescending
        }
        let (pins, total) = try engine.pins(limit: limit, skip: skip, order: order, uniqueKey: p.string("uniqueKey"))
        return JSONResponse.body(try encoder(request).pins(pins, total: total, next: skip + pins.count < total ? String(skip + pins.count) : nil))
    }

    func createPin(_ request: Request) async throws -> Response {
        try write.check(request)
        let input = try await pinInput(request)
        let pin = try engine.createPin(input)
        return JSONResponse.body(try encoder(request).record(.pin(pin)), status: .created)
    }

    func getPin(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let id = try id(context)
        guard let pin = engine.pin(id: id) else { throw SearchError.notFound(kind: "pin", id: id) }
        return JSONResponse.body(try encoder(request).record(.pin(pin)))
    }

    func updatePin(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try write.check(request)
        let id = try id(context)
        let input = try await pinInput(request)
        return JSONResponse.body(try encoder(request).record(.pin(try engine.updatePin(id: id, input))))
    }

    func deletePin(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try write.check(request)
        try engine.deletePin(id: try id(context))
        return Response(status: .noContent)
    }

    private func pinInput(_ request: Request) async throws -> PinInput {
        let body = try await JSONBody.object(request, limit: maximumBodySize)
        let position = try JSONBody.position(body, coordsys: try Parameters(request).coordsys())
        return PinInput(
            uniqueKey: try JSONBody.string(body, "uniqueKey") ?? "", firstName: try JSONBody.string(body, "firstName") ?? "",
            lastName: try JSONBody.string(body, "lastName") ?? "", mapString: try JSONBody.string(body, "mapString") ?? "",
            mediaURL: try JSONBody.string(body, "mediaURL") ?? "", latitude: position.latitude, longitude: position.longitude
        )
    }
}

/// Reading JSON request bodies with clear 4xx answers.
enum JSONBody {
    static func object(_ request: Request, limit: Int) async throws -> [String: Any] {
        let buffer = try await request.body.collect(upTo: limit)
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)), let dictionary = object as? [String: Any] else {
            throw Problem.badRequest("the body must be a JSON object")
        }
        return dictionary
    }

    static func string(_ body: [String: Any], _ key: String, required: Bool = false) throws(Problem) -> String? {
        guard let value = body[key], !(value is NSNull) else {
            if required { throw .badRequest("\(key) is required") }
            return nil
        }
        guard let text = value as? String else { throw .badRequest("\(key) must be a string") }
        return text
    }

    static func number(_ body: [String: Any], _ keys: [String]) throws(Problem) -> Double? {
        for key in keys {
            guard let value = body[key] else { continue }
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c", number.doubleValue.isFinite else {
                throw .badRequest("\(key) must be a number")
            }
            return number.doubleValue
        }
        return nil
    }

    /// lat/lon (or latitude/longitude) in the request's coordinate system, validated and converted to WGS-84.
    static func position(_ body: [String: Any], coordsys: CoordSys) throws -> Coordinate {
        guard let lat = try number(body, ["lat", "latitude"]) else { throw Problem.badRequest("lat is required (a number between -90 and 90)") }
        guard let lon = try number(body, ["lon", "longitude"]) else { throw Problem.badRequest("lon is required (a number between -180 and 180)") }
        return coordsys.toWGS84(try Coordinate(latitude: lat, longitude: lon))
    }
}
