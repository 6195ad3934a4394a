import API
import Access
import BundledData
import Foundation
import GeoCore
import HTTPServer
import HTTPTypes
import Hummingbird
import Records
import SearchEngine

/// "On the Map" clients: the Parse-style `StudentLocation` class at `/parse/classes/StudentLocation` and Udacity's
/// `/v1/StudentLocation`, over the same records as `/v1/pins` (one pin, two views). Every object carries all ten
/// fields with their JSON types — strict Codable clients fail a whole list on one missing field — and errors are
/// Parse's `{"code", "error"}`. X-Parse-Application-Id and X-Parse-REST-API-Key are accepted, not required; with a
/// server key, a write needs it as the REST key (or as `Authorization: Bearer`).
struct StudentLocationAdapter {
    let engine: SearchEngine
    let write: WriteAccess
    /// The threads writes block on (`ServerWork`).
    let writes: BlockingWrites
    let maximumBodySize: Int

    static let bases = ["/parse/classes/StudentLocation", "/v1/StudentLocation"]

    func register(on routes: RouteRegistrar) {
        // The same handlers under Parse's path and Udacity's v1 path (the route table's "parse…" and "udacity…" operations).
        for (prefix, base) in zip(["parse", "udacity"], Self.bases) {
            routes.on(prefix + "ListStudentLocations") { request, _ in await parseAsync { try await list(request) } }
            routes.on(prefix + "CreateStudentLocation") { request, context in await parseAsync { try await create(request, context, base: base) } }
            routes.on(prefix + "GetStudentLocation") { request, context in await parseAsync { try await get(request, context) } }
            routes.on(prefix + "UpdateStudentLocation") { request, context in await parseAsync { try await update(request, context) } }
            routes.on(prefix + "DeleteStudentLocation") { request, context in await parseAsync { try await delete(request, context) } }
        }
    }

    /// A Parse error: HTTP status, Parse code, message.
    struct ParseError: Error {
        let status: HTTPResponse.Status
        let code: Int
        let message: String

        static func invalidQuery(_ message: String) -> ParseError { ParseError(status: .badRequest, code: 102, message: message) }
        static func invalidType(_ message: String) -> ParseError { ParseError(status: .badRequest, code: 111, message: message) }
        static let notFound = ParseError(status: .notFound, code: 101, message: "Object not found.")
    }

    private func parse(_ body: () throws -> Response) -> Response {
        do { return try body() } catch { return errorResponse(error) }
    }

    private func parseAsync(_ body: () async throws -> Response) async -> Response {
        do { return try await body() } catch { return errorResponse(error) }
    }

    private func errorResponse(_ error: any Error) -> Response {
        let parseError: ParseError
        switch error {
        case let error as ParseError: parseError = error
        case let error as AccessError:
            switch error {
            // parse-server answers a request without its keys, or with a wrong one, 403 {"error": "unauthorized"}.
            case .noCredentials: parseError = ParseError(status: .forbidden, code: 119, message: "unauthorized")
            case .unauthenticated(let message):
                parseError = ParseError(status: .unauthorized, code: 209, message: "invalid session token: \(message)")
            case .forbidden(let message): parseError = ParseError(status: .forbidden, code: 119, message: message)
            case .limited(let message, let retryAfter):
                var response = Self.body(ParseError(status: .tooManyRequests, code: 155, message: message))
                if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
                return response
            }
        case let error as Problem:
            parseError = ParseError(status: error.status == .contentTooLarge ? .contentTooLarge : .badRequest, code: 107, message: error.detail)
        case let error as SearchError:
            switch error {
            case .notFound: parseError = .notFound
            case .quota: parseError = ParseError(status: .forbidden, code: 119, message: error.description)
            case .unavailable: parseError = ParseError(status: .serviceUnavailable, code: 1, message: error.description)
            default: parseError = .invalidType(error.description)
            }
        case let error as GeoError: parseError = .invalidType(error.description)
        case let error as ParameterError: parseError = .invalidType(error.description)
        default: parseError = ParseError(status: .internalServerError, code: 1, message: "Internal server error.")
        }
        return Self.body(parseError)
    }

    private static func body(_ parseError: ParseError) -> Response {
        var json = JSONWriter()
        json.beginObject()
        json.field("code", parseError.code)
        json.field("error", parseError.message)
        json.endObject()
        return JSONResponse.body(json.buffer, status: parseError.status)
    }

    /// The credentials of a Parse or Udacity request: v1's Bearer header, else Parse's session token (a user's
    /// token), else Parse's REST key (an API key).
    private func authorization(_ request: Request) -> String? {
        if let header = request.headers[.authorization] { return header }
        let session = request.headers[HTTPField.Name("X-Parse-Session-Token")!]
        let restKey = request.headers[HTTPField.Name("X-Parse-REST-API-Key")!]
        return (session ?? restKey).map { "Bearer \($0)" }
    }

    private func principal(_ request: Request, _ context: AppRequestContext) async throws -> Principal {
        try await write.principal(request, context, authorization: authorization(request))
    }

    // MARK: Reading

    func list(_ request: Request) async throws -> Response {
        let p = RequestParameters(request)
        let limit = try count(p, "limit", default: 100, maximum: 1_000)
        let skip = try count(p, "skip", default: 0, maximum: 1_000_000)
        let order = Self.order(p.string("order"))
        var equal: [(PinField, String)] = []
        if let key = p.string("uniqueKey") { equal.append((.uniqueKey, key)) }
        if let text = p.string("where"), !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let value: JSONValue
            do { value = try StrictJSON.parse(Array(text.utf8)) } catch {
                throw ParseError(status: .badRequest, code: 107, message: "where must be JSON: \(error.description)")
            }
            guard case .object(let members) = value else { throw ParseError.invalidQuery("where must be a JSON object") }
            for (key, condition) in members.sorted(by: { $0.key < $1.key }) {
                guard let field = PinField(rawValue: key) else {
                    throw ParseError.invalidQuery(
                        "where supports equality on \(PinField.allCases.map(\.rawValue).joined(separator: ", ")); not on \(key)"
                    )
                }
                guard case .string(let wanted) = condition else { throw ParseError.invalidQuery("where: \(key) must be compared with a string") }
                equal.append((field, wanted))
            }
        }
        // One query: the engine filters by owner and by every equality, orders and pages.
        let owner = try await RecordController.owner(p.string("owner"), authenticator: write.authenticator, authorization: authorization(request))
        let reader = await write.authenticator.reader(authorization: authorization(request))
        let selected = engine.pins(limit: limit, skip: skip, order: order, owner: owner, equal: equal).results
        var json = JSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for pin in selected { Self.write(pin, reader: reader, to: &json) }
        json.endArray()
        json.endObject()
        return JSONResponse.body(json.buffer)
    }

    func get(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let id = try objectID(context)
        let reader = await write.authenticator.reader(authorization: authorization(request))
        guard let pin = engine.pin(id: id) else { throw ParseError.notFound }
        var json = JSONWriter()
        Self.write(pin, reader: reader, to: &json)
        return JSONResponse.body(json.buffer)
    }

    /// Parse's `order`: comma-separated keys, `-` for descending; the first of createdAt/updatedAt decides, and
    /// unknown keys (a client sends `-updateAt`) are ignored.
    static func order(_ text: String?) -> PinOrder {
        for key in (text ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if let order = PinOrder(rawValue: key) { return order }
        }
        return .updatedAtDescending
    }

    private func count(_ p: QueryParameters, _ name: String, default value: Int, maximum: Int) throws -> Int {
        guard let text = p.string(name) else { return value }
        guard let n = DecimalNumber.parseInteger(Substring(text.trimmingCharacters(in: .whitespaces))), n >= 0 else {
            throw ParseError.invalidQuery("\(name) must be a non-negative integer")
        }
        return min(n, maximum)
    }

    private func objectID(_ context: AppRequestContext) throws -> String {
        guard let raw = context.parameters.get("objectId"), let id = RecordController.percentDecoded(raw[...]), !id.isEmpty,
            id.unicodeScalars.count <= 200
        else {
            throw ParseError.notFound
        }
        return id
    }

    /// All ten fields, with their JSON types, in Parse's names, and whether the reader (a user's `sub`, or nil) owns it.
    static func write(_ pin: PinRecord, reader: String?, to json: inout JSONWriter) {
        json.beginObject()
        let owned = pin.isOwned(by: reader)
        json.pinFields(pin, id: "objectId", kind: false, latitude: ("latitude", pin.lat), longitude: ("longitude", pin.lon), owned: owned)
        json.endObject()
    }

    // MARK: Writing

    private func body(_ request: Request) async throws -> [String: JSONValue] {
        let buffer = try await request.body.collect(upTo: maximumBodySize)
        let value: JSONValue
        do { value = try StrictJSON.parse(buffer.readableBytesView) } catch {
            throw ParseError(status: .badRequest, code: 107, message: "invalid JSON: \(error.description)")
        }
        guard case .object(let members) = value else { throw ParseError(status: .badRequest, code: 107, message: "the body must be a JSON object") }
        return members
    }

    /// The body's fields over `old` (Parse updates only the keys it is given).
    private func input(_ body: [String: JSONValue], over old: PinRecord?) throws -> PinInput {
        func text(_ key: String, _ current: String?) throws -> String {
            switch body[key] {
            case nil: return current ?? ""
            case .null?: return ""
            case .string(let value)?: return value
            case let other?: throw ParseError.invalidType("invalid type for key \(key), expected string, but got \(other.kindDescription)")
            }
        }
        func number(_ key: String, _ current: Double?) throws -> Double {
            switch body[key] {
            case nil:
                guard let current else { throw ParseError(status: .badRequest, code: 142, message: "\(key) is required (a number)") }
                return current
            case .number(let value)?: return value
            case let other?: throw ParseError.invalidType("invalid type for key \(key), expected number, but got \(other.kindDescription)")
            }
        }
        let input = PinInput(
            uniqueKey: try text("uniqueKey", old?.uniqueKey),
            firstName: try text("firstName", old?.firstName),
            lastName: try text("lastName", old?.lastName),
            mapString: try text("mapString", old?.mapString),
            mediaURL: try text("mediaURL", old?.mediaURL),
            latitude: try number("latitude", old?.lat),
            longitude: try number("longitude", old?.lon)
        )
        // Parse keeps whatever text a client puts in mediaURL (On the Map apps send junk and empty strings).
        try PinRules.check(input, mediaURLMustBeURL: false)
        return input
    }

    func create(_ request: Request, _ context: AppRequestContext, base: String) async throws -> Response {
        let owner = try WritePolicy.createPin(try await principal(request, context))
        let pinInput = try input(try await body(request), over: nil)
        let maximum = write.maximumPinsPerUser
        let pin = try await writes.run { [engine] in try engine.createPin(pinInput, owner: owner, maximumPerOwner: maximum) }
        var json = JSONWriter()
        json.beginObject()
        json.field("createdAt", pin.createdAt)
        json.field("objectId", pin.id)
        json.endObject()
        var response = JSONResponse.body(json.buffer, status: .created)
        response.headers[.location] = "\(base)/\(pin.id)"
        return response
    }

    func update(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await principal(request, context)
        let id = try objectID(context)
        guard let old = try await writes.pinToChange(id, in: engine) else { throw ParseError.notFound }
        try WritePolicy.changePin(principal, owner: old.owner)
        let pinInput = try input(try await body(request), over: old)
        let pin = try await writes.run { [engine] in try engine.updatePin(id: id, pinInput) }
        var json = JSONWriter()
        json.beginObject()
        json.field("updatedAt", pin.updatedAt)
        json.endObject()
        return JSONResponse.body(json.buffer)
    }

    func delete(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let principal = try await principal(request, context)
        let id = try objectID(context)
        guard let old = try await writes.pinToChange(id, in: engine) else { throw ParseError.notFound }
        try WritePolicy.changePin(principal, owner: old.owner)
        try await writes.run { [engine] in try engine.deletePin(id: id) }
        return JSONResponse.body(Array("{}".utf8))
    }
}
