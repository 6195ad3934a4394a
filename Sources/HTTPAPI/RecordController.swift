import API
import Access
import BundledData
import Foundation
import GeoCore
import HTTPServer
import Hummingbird
import Records
import SearchEngine

/// POIs and pins: reads, and writes that are durable before the 2xx is sent.
struct RecordController {
    let engine: SearchEngine
    let write: WriteAccess
    /// The threads writes block on (`ServerWork`).
    let writes: BlockingWrites
    let maximumBodySize: Int

    func register(on routes: RouteRegistrar) {
        routes.read("getPOI") { input in try getPOI(input) }
        routes.write("putPOI") { request, context in try await putPOI(request, context) }
        routes.write("deletePOI") { request, context in try await deletePOI(request, context) }
        routes.on("listPins") { request, _ in try await listPins(request) }
        routes.write("createPin") { request, context in try await createPin(request, context) }
        // Not a fast-lane read: the answer says whether the pin is the caller's, so it reads the credentials.
        routes.on("getPin") { request, context in try await getPin(request, context) }
        routes.write("updatePin") { request, context in try await updatePin(request, context) }
        routes.write("deletePin") { request, context in try await deletePin(request, context) }
    }

    private func encoder(_ request: Request) throws -> APIEncoder {
        let p = RequestParameters(request)
        return APIEncoder(coordsys: try p.coordsys(), format: try p.format())
    }

    /// The encoder of a pin answer, which says to its reader which pins are theirs (`owned`).
    private func pinEncoder(_ request: Request) async throws -> APIEncoder {
        let p = RequestParameters(request)
        let reader = await write.authenticator.reader(authorization: request.headers[.authorization])
        return APIEncoder(coordsys: try p.coordsys(), format: try p.format(), reader: .some(reader))
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
        guard let id = percentDecoded(raw) else { throw .badRequest("id must be valid percent-encoded UTF-8") }
        guard !id.isEmpty, id.unicodeScalars.count <= 200 else { throw .badRequest("id must be 1 to 200 characters") }
        guard !id.containsControlCharacter else {
            throw .badRequest("id must not contain control characters")
        }
        return id
    }

    /// A path segment percent-decoded from its bytes — nil for a `%` without two hex digits after it or for decoded
    /// bytes that are not UTF-8; `+` stays `+` — without bridging to `NSString` through Foundation's
    /// `removingPercentEncoding` (3.4 % of a pin write's CPU: RESULTS.md, "Pin writes: what the router's path costs").
    /// Foundation on Linux agrees but for some bytes that are not UTF-8, which it sometimes turned into U+FFFD
    /// (`%A9`) and sometimes refused (`%80`); they are all refused now, as the message of a refused id says
    /// (`PathDecodingTests`).
    static func percentDecoded(_ raw: Substring) -> String? {
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return String(raw) }
        @inline(__always) func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        let bytes = Array(raw.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) else { return nil }
                decoded.append(high << 4 | low)
                i += 3
            } else {
                decoded.append(bytes[i])
                i += 1
            }
        }
        return String(validating: decoded, as: UTF8.self)
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
        let poi = try POIBody(
            try await request.body.collect(upTo: maximumBodySize).readableBytesView,
            id: id,
            coordsys: try RequestParameters(request).coordsys()
        ).record
        let saved = try await writes.run { [engine] in try engine.upsertPOI(poi) }
        // A client geocodes the house it wrote in its next request: the answer waits for the address step.
        await engine.addressesSettled()
        let encoder = try encoder(request)
        return answer(encoder, encoder.record(.poi(saved.record)), status: saved.created ? .created : .ok)
    }

    func deletePOI(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        try WritePolicy.writePOI(try await write.principal(request, context))
        let poiID = try id(context)
        try await writes.run { [engine] in try engine.deletePOI(id: poiID) }
        await engine.addressesSettled()
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
        let encoder = try await pinEncoder(request)
        let (pins, total) = engine.pins(limit: limit, skip: skip, order: order, uniqueKey: uniqueKey, owner: owner)
        return answer(encoder, encoder.pins(pins, total: total, next: skip + pins.count < total ? String(skip + pins.count) : nil))
    }

    func createPin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let owner = try WritePolicy.createPin(try await write.principal(request, context))
        let input = try await pinInput(request)
        let encoder = try encoder(request, owner: owner)
        let maximum = write.maximumPinsPerUser
        let pin = try await writes.run { [engine] in try engine.createPin(input, owner: owner, maximumPerOwner: maximum) }
        return answer(encoder, encoder.record(.pin(pin)), status: .created)
    }

    func getPin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try id(context)
        let encoder = try await pinEncoder(request)
        guard let pin = engine.pin(id: id) else { throw SearchError.notFound(kind: "pin", id: id) }
        return answer(encoder, encoder.record(.pin(pin)))
    }

    /// The encoder of the answer to a pin write, whose writer is known: a user sees `owned` true on their own pin.
    private func encoder(_ request: Request, owner: String?) throws -> APIEncoder {
        let p = RequestParameters(request)
        return APIEncoder(coordsys: try p.coordsys(), format: try p.format(), reader: .some(owner))
    }

    func updatePin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await write.principal(request, context)
        let id = try id(context)
        guard let old = try await writes.pinToChange(id, in: engine) else { throw SearchError.notFound(kind: "pin", id: id) }
        try WritePolicy.changePin(principal, owner: old.owner)
        let encoder = try encoder(request, owner: principal.owner)
        let input = try await pinInput(request)
        let updated = try await writes.run { [engine] in try engine.updatePin(id: id, input) }
        return answer(encoder, encoder.record(.pin(updated)))
    }

    func deletePin(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await write.principal(request, context)
        let id = try id(context)
        guard let old = try await writes.pinToChange(id, in: engine) else { throw SearchError.notFound(kind: "pin", id: id) }
        try WritePolicy.changePin(principal, owner: old.owner)
        try await writes.run { [engine] in try engine.deletePin(id: id) }
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
        try PinBody.input(
            try await request.body.collect(upTo: maximumBodySize).readableBytesView,
            coordsys: try RequestParameters(request).coordsys()
        )
    }
}
