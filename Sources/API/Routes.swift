/// One operation of the server: a method on a path.
public struct Route: Sendable, Hashable, CustomStringConvertible {
    public enum Method: String, Sendable, Hashable, CaseIterable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
        case delete = "DELETE"
    }

    /// What the operation belongs to.
    public enum Group: Sendable, Hashable {
        /// This service's API, described by the OpenAPI document.
        case api
        /// Another service's API in its own wire format (AMap, On the Map, Nominatim, Photon): not in the document.
        case compatibility
        /// Files the map page and the docs page load.
        case asset
    }

    public let method: Method
    /// The path as an OpenAPI template: `/v1/pois/{id}`; `**` as the last segment matches the rest of a path.
    public let path: String
    /// Unique over the table; the OpenAPI document's operationId for `.api` routes.
    public let operationId: String
    public let group: Group

    public init(_ method: Method, _ path: String, _ operationId: String, _ group: Group = .api) {
        self.method = method
        self.path = path
        self.operationId = operationId
        self.group = group
    }

    public var description: String { "\(method.rawValue) \(path)" }

    /// The path's segments; a `{name}` segment matches any one segment, `**` the rest.
    public var segments: [Substring] { path.split(separator: "/") }

    func matches(_ parts: [Substring]) -> Bool {
        let pattern = segments
        if pattern.last == "**" {
            return parts.count >= pattern.count && zip(pattern.dropLast(), parts).allSatisfy(Self.segment(_:matches:))
        }
        return pattern.count == parts.count && zip(pattern, parts).allSatisfy(Self.segment(_:matches:))
    }

    /// A literal segment matches itself; `{name}` any segment; `{name}.ext` any segment ending in `.ext` with
    /// something before it.
    static func segment(_ pattern: Substring, matches part: Substring) -> Bool {
        guard pattern.hasPrefix("{"), let close = pattern.firstIndex(of: "}") else { return pattern == part }
        let suffix = pattern[pattern.index(after: close)...]
        return part.count > suffix.count && part.hasSuffix(suffix)
    }
}

/// Every operation the server answers, once. The HTTP router registers exactly these (the server refuses to build
/// if an operation has no handler or a handler no operation), the 405 answers and their `Allow` header come from
/// it, and the OpenAPI document's `paths` are made from its `.api` routes in this order.
public enum RouteTable {
    public static let routes: [Route] = [
        // The map page and this API's documentation.
        Route(.get, "/", "mapPage"),
        Route(.get, "/docs", "docsPage"),
        // Queries.
        Route(.get, "/v1/nearby", "nearby"),
        Route(.get, "/v1/search", "search"),
        Route(.get, "/v1/within", "within"),
        Route(.get, "/v1/clusters", "clusters"),
        // Vector tiles for map clients.
        Route(.get, "/tiles/{layer}/{z}/{x}/{y}.mvt", "tile"),
        Route(.get, "/tiles/{layer}.json", "tileJSON"),
        // Records.
        Route(.get, "/v1/pois/{id}", "getPOI"),
        Route(.put, "/v1/pois/{id}", "putPOI"),
        Route(.delete, "/v1/pois/{id}", "deletePOI"),
        Route(.get, "/v1/pins", "listPins"),
        Route(.post, "/v1/pins", "createPin"),
        Route(.get, "/v1/pins/{id}", "getPin"),
        Route(.put, "/v1/pins/{id}", "updatePin"),
        Route(.delete, "/v1/pins/{id}", "deletePin"),
        // Live areas.
        Route(.post, "/v1/fences", "createFence"),
        Route(.get, "/v1/fences", "listFences"),
        Route(.get, "/v1/fences/{id}", "getFence"),
        Route(.delete, "/v1/fences/{id}", "deleteFence"),
        Route(.get, "/v1/fences/{id}/events", "fenceEvents"),
        // Geocoding and conversion.
        Route(.get, "/v1/geocode", "geocode"),
        Route(.get, "/v1/suggest", "suggest"),
        Route(.get, "/v1/reverse", "reverse"),
        Route(.get, "/v1/streets", "streets"),
        Route(.get, "/v1/convert", "convert"),
        Route(.post, "/v1/convert", "convertBatch"),
        // Operations.
        Route(.get, "/health", "health"),
        Route(.get, "/metrics", "metrics"),
        Route(.get, "/openapi.json", "openapi"),
        Route(.post, "/v1/import", "importRecords"),
        Route(.get, "/v1/tasks", "importTasks"),
        Route(.get, "/v1/tasks/{id}", "importTask"),
        Route(.post, "/v1/backups", "createBackup"),
        Route(.get, "/v1/backups", "listBackups"),
        Route(.get, "/v1/backups/{id}", "getBackup"),

        // Nominatim and Photon (geopy and other geocoding clients).
        Route(.get, "/nominatim/search", "nominatimSearch", .compatibility),
        Route(.get, "/nominatim/reverse", "nominatimReverse", .compatibility),
        Route(.get, "/nominatim/status", "nominatimStatus", .compatibility),
        Route(.get, "/photon/api", "photonSearch", .compatibility),
        Route(.get, "/photon/reverse", "photonReverse", .compatibility),
        // On the Map: Parse, and Udacity's v1.
        Route(.get, "/parse/classes/StudentLocation", "parseListStudentLocations", .compatibility),
        Route(.post, "/parse/classes/StudentLocation", "parseCreateStudentLocation", .compatibility),
        Route(.get, "/parse/classes/StudentLocation/{objectId}", "parseGetStudentLocation", .compatibility),
        Route(.put, "/parse/classes/StudentLocation/{objectId}", "parseUpdateStudentLocation", .compatibility),
        Route(.delete, "/parse/classes/StudentLocation/{objectId}", "parseDeleteStudentLocation", .compatibility),
        Route(.get, "/v1/StudentLocation", "udacityListStudentLocations", .compatibility),
        Route(.post, "/v1/StudentLocation", "udacityCreateStudentLocation", .compatibility),
        Route(.get, "/v1/StudentLocation/{objectId}", "udacityGetStudentLocation", .compatibility),
        Route(.put, "/v1/StudentLocation/{objectId}", "udacityUpdateStudentLocation", .compatibility),
        Route(.delete, "/v1/StudentLocation/{objectId}", "udacityDeleteStudentLocation", .compatibility),
        // AMap Web Service API.
        Route(.get, "/v3/place/text", "amapV3PlaceText", .compatibility),
        Route(.get, "/v3/place/around", "amapV3PlaceAround", .compatibility),
        Route(.get, "/v3/place/polygon", "amapV3PlacePolygon", .compatibility),
        Route(.get, "/v3/place/detail", "amapV3PlaceDetail", .compatibility),
        Route(.get, "/v5/place/text", "amapV5PlaceText", .compatibility),
        Route(.get, "/v5/place/around", "amapV5PlaceAround", .compatibility),
        Route(.get, "/v5/place/polygon", "amapV5PlacePolygon", .compatibility),
        Route(.get, "/v5/place/detail", "amapV5PlaceDetail", .compatibility),
        Route(.get, "/v3/geocode/geo", "amapGeocode", .compatibility),
        Route(.get, "/v3/geocode/regeo", "amapRegeocode", .compatibility),
        Route(.get, "/v3/assistant/coordinate/convert", "amapConvert", .compatibility),
        Route(.get, "/v3/assistant/inputtips", "amapInputTips", .compatibility),

        Route(.get, "/static/**", "staticFile", .asset),
    ]

    /// The route with this operationId.
    public static func route(_ operationId: String) -> Route? { routes.first { $0.operationId == operationId } }

    /// The methods some route answers on `path` (without the query), in the table's order; nil when none matches.
    /// `/v1/StudentLocation` is literal and so wins over no other route: paths of different routes never overlap
    /// except by method.
    public static func methods(for path: some StringProtocol) -> [Route.Method]? {
        let parts = path.split(separator: "/").map { Substring($0) }
        let matching = routes.filter { $0.matches(parts) }.map(\.method)
        return matching.isEmpty ? nil : matching
    }
}
