import GeoCore
import SearchEngine

// The list operations (nearby, search, within, clusters) as typed requests: parsed and validated from parameters
// once, here, for the HTTP server and the CLI alike (the CLI's local mode parses the same parameters it would send
// with --server). Each holds the engine's query and the encoder of its answer.

/// A list operation's request: parsed from parameters, the engine's query, and the encoder of its answer.
public protocol ListRequest: Sendable {
    associatedtype Query
    associatedtype Answer

    init<S>(_ p: RequestParameters<S>) throws(ParameterError)
    var query: Query { get }
    var encoder: APIEncoder { get }
    func encode(_ answer: Answer) -> [UInt8]
}

/// GET /v1/nearby.
public struct NearbyRequest: ListRequest {
    public var query: NearbyQuery
    public var encoder: APIEncoder

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        encoder = try p.encoder()
        let radius = try p.double("radius", rule: Rules.radius)
        if let radius {
            guard radius > 0, radius <= Rules.maximumRadius else { throw ParameterError("radius", Rules.radius) }
        }
        query = NearbyQuery(
            Around(try p.origin(required: true, coordsys: encoder.coordsys)!, radius: radius),
            text: try p.text(),
            category: try p.category(),
            kind: try p.kind(),
            limit: try p.limit()
        )
        query.after = try p.string("cursor").map { text throws(ParameterError) in try PageCursor.nearby(text, query: query) }
    }

    /// The answer's bytes, with the cursor of the next page.
    public func encode(_ page: Page) -> [UInt8] {
        encoder.page(
            page,
            next: page.next.flatMap { position in
                guard case .nearest(let after) = position else { return nil }
                return PageCursor.nearby(after, query: query)
            }
        )
    }
}

/// GET /v1/search.
public struct SearchRequest: ListRequest {
    public var query: SearchQuery
    public var encoder: APIEncoder

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        encoder = try p.encoder()
        guard let text = try p.text() else { throw ParameterError("q", "is required") }
        query = SearchQuery(
            text: text,
            origin: try p.origin(required: false, coordsys: encoder.coordsys),
            bbox: try p.bbox(coordsys: encoder.coordsys),
            category: try p.category(),
            kind: try p.kind(),
            limit: try p.limit(),
            offset: try p.int("offset", in: 0...Rules.maximumOffset, default: 0)
        )
    }

    /// The answer's bytes; `next` is the offset of the next page.
    public func encode(_ page: Page) -> [UInt8] {
        encoder.page(
            page,
            next: page.next.flatMap { position in
                guard case .offset(let offset) = position else { return nil }
                return String(offset)
            }
        )
    }
}

/// GET /v1/within.
public struct WithinRequest: ListRequest {
    public var query: WithinQuery
    public var encoder: APIEncoder

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        encoder = try p.encoder()
        let area: QueryArea
        switch (try p.bbox(coordsys: encoder.coordsys), try p.polygon(coordsys: encoder.coordsys)) {
        case (let box?, nil): area = .box(box)
        case (nil, let polygon?): area = .polygon(polygon)
        case (nil, nil): throw ParameterError("bbox", "or polygon is required")
        default: throw ParameterError("bbox", "and polygon must not both be given")
        }
        query = WithinQuery(area, text: try p.text(), category: try p.category(), kind: try p.kind(), limit: try p.limit())
        query.after = try p.string("cursor").map { text throws(ParameterError) in try PageCursor.within(text, query: query) }
    }

    public func encode(_ page: Page) -> [UInt8] {
        encoder.page(
            page,
            next: page.next.flatMap { position in
                guard case .record(let after) = position else { return nil }
                return PageCursor.within(after, query: query)
            }
        )
    }
}

/// GET /v1/clusters.
public struct ClustersRequest: ListRequest {
    public var query: ClusterQuery
    public var encoder: APIEncoder

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        encoder = try p.encoder()
        let box = try p.bbox(coordsys: encoder.coordsys, required: true)!
        guard let precision = try p.int("precision", rule: Rules.precision) else {
            throw ParameterError("precision", "is required (an integer between 1 and 12)")
        }
        guard (1...12).contains(precision) else { throw ParameterError("precision", Rules.precision) }
        query = ClusterQuery(bbox: box, precision: precision, text: try p.text(), category: try p.category(), kind: try p.kind())
    }

    public func encode(_ clusters: [ClusterCell]) -> [UInt8] { encoder.clusters(clusters) }
}
