import API
import Access
import BundledData
import Catalog
import Foundation
import GeoCore
import HTTPServer
import Hummingbird
import SearchEngine

/// POIs and pins: reads, and writes that are durable before the 2xx is sent.
struct RecordController {
    let engine: SearchEngine
    let write: WriteAccess
    let maximumBodySize: Int

    func register(on routes: RouteRegistrar) {
        routes.read("getPOI") { input in try getPOI(input) }
        routes.on("putPOI") { request, context in try await putPOI(request, context) }
        routes.on("deletePOI") { request, context in try await deletePOI(request, context) }
        routes.on("listPins") { request, _ in try await listPins(request) }
        routes.on("createPin") { request, context in try await createPin(request, context) }
        routes.read("getPin") { input in try getPin(input) }
        routes.on("updatePin") { request, context in try await updatePin(request, context) }
        routes.on("deletePin") { request, context in try await deletePin(request, context) }
    }

    private func encoder(_ request: Request) throws -> APIEncoder {
        let p = RequestParameters(request)
        return APIEncoder(coordsys: try p.coordsys(), format: try p.format())
    }

    /// An answer in the request's format, labelled application/geo+json for GeoJSON.
    private func answer(_ encoder: APIEncoder, _ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        JSONResponse.body(bytes, status: status, geojson: encoder.format == .geojson)
    }

    /// The record id of the path, percent-decoded (`/v1/pois/caf%C3%A9-1` is the id `café-1`; `%2F` is a `/`
    /// inside the id).
    private func id(_ context: AppRequestContext) throws(Problem) -> String {
        try Self.id(context.parameters.get("id")?[...])
    }

    static func id(_ raw: Substring?) throws(Problem) -> String {
        guard let raw else { throw .badRequest("id must be 1 to 200 characters") }
        guard let id = raw.removingPercentEncoding else { throw .badRequest("id must be valid percent-encoded UTF-8") }
        guard !id.isEmpty, id.unicodeScalars.count <= 200 else { throw .badRequest("id must be 1 to 200 characters") }
        guard !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("id must not contain control characters")
        }
        return id
    }

    func getPOI(_ input: ReadInput) throws -> ReadAnswer {
        try record(input, kind: "poi") { [engine] id in engine.poi(id: id).map { .poi($0) } }
    }

    /// GET of one record by the id of the path, in the request's format.
    private func record(_ input: ReadInput, kind: String, _ find: (String) -> Hit.Record?) throws -> ReadAnswer {
        let id = try Self.id(input.pathParameter)
        guard let record = find(id) else { throw SearchError.notFound(kind: kind, id: id) }
        let encoder = try input.parameters.encoder()
        return .encoded(encoder, encoder.record(record))
    }

    func putPOI(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        try WritePolicy.writePOI(try await write.principal(request, context))
        let id = try id(context)
        let coordsys = try RequestParameters(request).coordsys()
        let body = try await JSONBody.object(request, limit: maximumBodySize)
        if let given = try JSONBody.string(body, "id"), given != id {
            throw Problem.badRequest("id in the body must match the path (or be left out)")
        }
        let position = try JSONBody.position(body, coordsys: coordsys)
        var tags: [String: String] = [:]
        switch body["tags"] {
        case nil, .null?: break
        case .object(let object)?:
            for (key, value) in object {
                guard case .string(let text) = value else { throw Problem.badRequest("tags.\(key) must be a string") }
                tags[key] = text
            }
        default: throw Problem.badRequest("tags must be an object of strings")
        }
        let poi = POIRecord(
            id: id,
            name: try JSONBody.string(body, "name", required: true)!,
            category: try JSONBody.string(body, "category", required: true)!,
            address: try JSONBody.string(body, "address"),
            city: try JSONBody.string(body, "city"),
            country: try JSONBody.string(body, "country"),
            lat: position.latitude,
            lon: position.longitude,
            tags: tags
        )
        let saved = try await BlockingWrites.run { [engine] in try engine.upsertPOI(poi) }
        let encoder = try encoder(request)
        return answer(encoder, encoder.record(.poi(saved.record)), status: saved.created ? .created : .ok)
    }

    func deletePOI(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        try WritePolicy.writePOI(try await write.principal(request, context))
        let poiID = try id(context)
        try await BlockingWrites.run { [engine] in try engine.deletePOI(id: poiID) }
        return Response(status: .noContent)
    }

    func listPins(_ request: Request) async throws -> Response {
        let p = RequestParameters(request)
        let limit = try p.limit()
        let skip = try p.int("skip", rule: "must be an integer between 0 and 1000000") ?? 0
        guard (0...1_000_000).contains(skip) else { throw Problem.badRequest("skip must be an integer between 0 and 1000000") }
        let uniqueKey = p.string("uniqueKey")
        if let uniqueKey, uniqueKey.unicodeScalars.count > 200 { throw Problem.badRequest("uniqueKey must be at most 200 characters") }
        let order: PinOrder
        if let text = p.string("order") {
            guard let parsed = PinOrder(rawValue: text) else {
                throw Problem.badRequest("order must be one of -updatedAt, updatedAt, -createdAt, createdAt")
            }
            order = parsed
        } else {
            order = .updatedAtDescending
        }
        let owner = try await Self.owner(p.string("owner"), authenticator: write.authenticator, authorization: request.headers[.authorization])
        let (pins, total) = engine.pins(limit: limit, skip: skip, order: order, uniqueKey: uniqueKey, owner: owner)
        let encoder = try encoder(request)
        return answer(encoder, encoder.pins(pins, total: total, next: skip + pins.count < total ? String(skip + pins.count) : nil))
    }

    func createPin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let owner = try WritePolicy.createPin(try await write.principal(request, context))
        let input = try await pinInput(request)
        let encoder = try encoder(request)
        let maximum = write.maximumPinsPerUser
        let pin = try await BlockingWrites.run { [engine] in try engine.createPin(input, owner: owner, maximumPerOwner: maximum) }
        return answer(encoder, encoder.record(.pin(pin)), status: .created)
    }

    func getPin(_ input: ReadInput) throws -> ReadAnswer {
        try record(input, kind: "pin") { [engine] id in engine.pin(id: id).map { .pin($0) } }
    }

    func updatePin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await write.principal(request, context)
        let id = try id(context)
        guard let old = engine.pin(id: id) else { throw SearchError.notFound(kind: "pin", id: id) }
        try WritePolicy.changePin(principal, owner: old.owner)
        let encoder = try encoder(request)
        let input = try await pinInput(request)
        let updated = try await BlockingWrites.run { [engine] in try engine.updatePin(id: id, input) }
        return answer(encoder, encoder.record(.pin(updated)))
    }

    func deletePin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await write.principal(request, context)
        let id = try id(context)
        guard let old = engine.pin(id: id) else { throw SearchError.notFound(kind: "pin", id: id) }
        try WritePolicy.changePin(principal, owner: old.owner)
        try await BlockingWrites.run { [engine] in try engine.deletePin(id: id) }
        return Response(status: .noContent)
    }

    /// The `owner` filter of a pin list: only `me`, the pins of the caller ("is my location already there?") — a
    /// user's own pins for a token; for an API key or an open server's anonymous caller, the pins no user owns.
    /// Nil when the parameter is absent.
    static func owner(_ value: String?, authenticator: Authenticator, authorization: String?) async throws -> SearchEngine.PinOwner? {
        guard let value else { return nil }
        guard value == "me" else { throw Problem.badRequest("owner must be me (the pins of the caller whose credentials are sent)") }
        switch try await authenticator.principal(authorization: authorization) {
        case .user(let subject): return .user(subject)
        case .key, .anonymous: return .nobody
        }
    }

    private func pinInput(_ request: Request) async throws -> PinInput {
        let body = try await JSONBody.object(request, limit: maximumBodySize)
        let position = try JSONBody.position(body, coordsys: try RequestParameters(request).coordsys())
        return PinInput(
            uniqueKey: try JSONBody.string(body, "uniqueKey") ?? "",
            firstName: try JSONBody.string(body, "firstName") ?? "",
            lastName: try JSONBody.string(body, "lastName") ?? "",
            mapString: try JSONBody.string(body, "mapString") ?? "",
            mediaURL: try JSONBody.string(body, "mediaURL") ?? "",
            latitude: position.latitude,
            longitude: position.longitude
        )
    }
}

/// Reading JSON request bodies with clear 4xx answers: strict JSON (`StrictJSON`), a JSON object at the top, and
/// each field of the type the contract says.
enum JSONBody {
    static func object(_ request: Request, limit: Int) async throws -> [String: JSONValue] {
        let buffer = try await request.body.collect(upTo: limit)
        let value: JSONValue
        do {
            value = try StrictJSON.parse(buffer.readableBytesView)
        } catch {
            throw Problem.badRequest("the body is not valid JSON: \(error.description)")
        }
        guard case .object(let members) = value else { throw Problem.badRequest("the body must be a JSON object, not \(value.kindDescription)") }
        return members
    }

    static func string(_ body: [String: JSONValue], _ key: String, required: Bool = false, maximumLength: Int = 1_000) throws(Problem) -> String? {
        switch body[key] {
        case nil, .null?:
            if required { throw .badRequest("\(key) is required") }
            return nil
        case .string(let text)?:
            guard text.unicodeScalars.count <= maximumLength else { throw .badRequest("\(key) must be at most \(maximumLength) characters") }
            return text
        case let other?:
            throw .badRequest("\(key) must be a string, not \(other.kindDescription)")
        }
    }

    static func number(_ body: [String: JSONValue], _ keys: [String]) throws(Problem) -> Double? {
        let present = keys.filter { body[$0] != nil }
        if present.count > 1 { throw .badRequest("give only one of \(present.joined(separator: " and "))") }
        guard let key = present.first else { return nil }
        guard case .number(let value)? = body[key] else { throw .badRequest("\(key) must be a number, not \(body[key]!.kindDescription)") }
        return value
    }

    /// lat/lon (or latitude/longitude) in the request's coordinate system, validated and converted to WGS-84.
    static func position(_ body: [String: JSONValue], coordsys: CRS.Geographic) throws -> Coordinate {
        guard let lat = try number(body, ["lat", "latitude"]) else { throw Problem.badRequest("lat is required (a number between -90 and 90)") }
        guard let lon = try number(body, ["lon", "longitude"]) else { throw Problem.badRequest("lon is required (a number between -180 and 180)") }
        return coordsys.toWGS84(try Coordinate(latitude: lat, longitude: lon))
    }
}
