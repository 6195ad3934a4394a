import GeoCore
import Records
import SpatialIndex

/// Which records a query looks at.
public enum KindFilter: String, Sendable, CaseIterable {
    case poi, pin, all

    func includes(_ kind: RecordKind) -> Bool { self == .all || rawValue == kind.rawValue }
}

// The query types below are plain values. Their parameters are parsed and validated once, by the wire layer
// (`Sources/API`, which the HTTP server and the CLI share); the engine answers any value they hold (a limit of 0 is
// an empty page, an empty text matches nothing).

/// A geohash cell of a map's clusters: how many records, and their mean position.
public struct ClusterCell: Sendable, Equatable {
    public let geohash: Geohash
    public let count: Int
    public let latitude: Double
    public let longitude: Double
}

/// A query that pages through the records of a place: nearby (around an origin, nearest first) and within (inside an
/// area, in record order) share their filters and their paging.
public struct PlaceQuery<Place: Sendable & Equatable, Cursor: Sendable & Equatable>: Sendable, Equatable {
    public var place: Place
    public var text: String?
    /// Category paths such as `food` or `food.cafe`, lower case: records of any of them (or below) only.
    public var categories: [String]
    public var kind: KindFilter
    public var limit: Int
    /// Continue after this position of a previous page (`Page.next`).
    public var after: Cursor?
    /// Skip this many results first (numbered pages, as the AMap adapter's).
    public var offset: Int
    /// Count the matches, up to this many, into `Page.total`; nil: no count.
    public var countUpTo: Int?

    public init(
        _ place: Place,
        text: String? = nil,
        category: String? = nil,
        categories: [String] = [],
        kind: KindFilter = .poi,
        limit: Int = 20,
        after: Cursor? = nil,
        offset: Int = 0,
        countUpTo: Int? = nil
    ) {
        self.place = place
        self.text = text
        self.categories = category.map { [$0] + categories } ?? categories
        self.kind = kind
        self.limit = limit
        self.after = after
        self.offset = offset
        self.countUpTo = countUpTo
    }
}

/// Where a nearby query looks: around an origin, within a radius in metres; without one, the `limit` nearest.
public struct Around: Sendable, Equatable {
    public var origin: Coordinate
    public var radius: Double?

    public init(_ origin: Coordinate, radius: Double? = nil) {
        self.origin = origin
        self.radius = radius
    }
}

/// Where a within query looks.
public enum QueryArea: Sendable, Equatable {
    case box(BoundingBox)
    case polygon(Polygon)
}

/// GET /v1/nearby: nearest first from an origin, continuing after a (distance key, record).
public typealias NearbyQuery = PlaceQuery<Around, NearestCursor>

/// GET /v1/within: records inside a box or polygon, in a stable order (record creation order), continuing after a
/// record number.
public typealias WithinQuery = PlaceQuery<QueryArea, UInt32>

extension PlaceQuery where Place == Around {
    public var origin: Coordinate {
        get { place.origin }
        set { place.origin = newValue }
    }

    public var radius: Double? {
        get { place.radius }
        set { place.radius = newValue }
    }

    /// How many nearest records a walk collects: the page after the offset and one more (to know whether a next
    /// page exists), or as many as are to be counted.
    var walkLength: Int { Swift.max(offset + limit + 1, countUpTo ?? 0) }
}

extension PlaceQuery where Place == QueryArea {
    public var area: QueryArea { place }
}

/// GET /v1/search: keyword search ranked by relevance.
public struct SearchQuery: Sendable, Equatable {
    public var text: String
    public var origin: Coordinate?
    public var bbox: BoundingBox?
    /// Records of any of these category paths (or below) only.
    public var categories: [String]
    public var kind: KindFilter
    public var limit: Int
    public var offset: Int

    public init(
        text: String,
        origin: Coordinate? = nil,
        bbox: BoundingBox? = nil,
        category: String? = nil,
        categories: [String] = [],
        kind: KindFilter = .poi,
        limit: Int = 20,
        offset: Int = 0
    ) {
        self.text = text
        self.origin = origin
        self.bbox = bbox
        self.categories = category.map { [$0] + categories } ?? categories
        self.kind = kind
        self.limit = limit
        self.offset = offset
    }
}

/// GET /v1/clusters.
public struct ClusterQuery: Sendable, Equatable {
    public var bbox: BoundingBox
    /// Geohash precision, 1 to 12.
    public var precision: Int
    public var text: String?
    /// Records of any of these category paths (or below) only.
    public var categories: [String]
    public var kind: KindFilter

    public init(bbox: BoundingBox, precision: Int, text: String? = nil, category: String? = nil, kind: KindFilter = .poi) {
        self.bbox = bbox
        self.precision = precision
        self.text = text
        self.categories = category.map { [$0] } ?? []
        self.kind = kind
    }
}

/// One record of an answer.
public struct Hit: Sendable {
    /// Indirect: a record is a pointer to its fields, so answers and the engine copy one reference, not every string.
    public indirect enum Record: Sendable, Equatable {
        case poi(POIRecord)
        case pin(PinRecord)
    }

    public enum Storage: Sendable {
        case record(Record)
        /// A POI straight from the record store: an encoder writes its bytes without making Strings.
        case packed(PackedPOI)
    }

    public let storage: Storage
    /// Metres from the origin (great circle, unrounded), when the query has one.
    public let distance: Double?
    /// Relevance, for keyword search (unrounded).
    public let score: Double?

    public var record: Record {
        switch storage {
        case .record(let record): return record
        case .packed(let packed): return .poi(packed.record)
        }
    }
}

extension Hit.Record {
    /// The record's WGS-84 position.
    public var position: Coordinate {
        switch self {
        case .poi(let poi): return Coordinate(uncheckedLatitude: poi.lat, longitude: poi.lon)
        case .pin(let pin): return Coordinate(uncheckedLatitude: pin.lat, longitude: pin.lon)
        }
    }
}

/// A page of results and where the next page starts (nil at the end).
public struct Page: Sendable {
    /// Where a following page continues: after a (distance key, record) of a nearby walk, after a record number of
    /// a within scan, or at an offset of a ranked list. The wire layer turns it into an opaque cursor.
    public enum Position: Sendable, Equatable {
        case nearest(NearestCursor)
        case record(UInt32)
        case offset(Int)
    }

    public let results: [Hit]
    public let next: Position?
    /// Total matches: keyword search's, or nearby's and within's counted up to their `countUpTo`.
    public let total: Int?
}

extension Array where Element == String {
    /// Whether a record of `category` passes a filter of these category paths (empty: every record does).
    func admits(_ category: String?) -> Bool {
        isEmpty || category.map { own in contains { own.isCategory(under: $0) } } == true
    }
}

extension Page.Position {
    /// The nearby walk's position, when this is one.
    public var nearest: NearestCursor? {
        if case .nearest(let cursor) = self { return cursor }
        return nil
    }

    /// The within scan's record, when this is one.
    public var record: UInt32? {
        if case .record(let number) = self { return number }
        return nil
    }
}

/// GET /tiles/{layer}/{z}/{x}/{y}.mvt: the records of one kind in a Web Mercator tile, as points in tile units or,
/// at zooms below `clusterBelow`, counted per cell of a `grid` × `grid` split of the tile.
public struct TileQuery: Sendable, Equatable {
    public var tile: WebMercatorTile
    public var kind: RecordKind
    public var text: String?
    /// Records of any of these category paths (or below) only.
    public var categories: [String]
    /// The datum the map is drawn in: a GCJ-02 map (AMap) places each record where that map shows it.
    public var datum: CRS.Geographic
    /// Tiles at zooms below this one hold clusters; 0: never.
    public var clusterBelow: Int
    /// Units per tile side.
    public var extent: Int
    /// Units around the tile whose records an unclustered tile also holds (so that a symbol on the edge is drawn
    /// whole on both sides).
    public var buffer: Int
    /// Cells per tile side when clustered.
    public var grid: Int
    /// The most points an unclustered tile holds; more is `SearchError.tooLarge`.
    public var maxPoints: Int

    public static let defaultClusterBelow = 14
    public static let defaultExtent = 4096
    public static let defaultBuffer = 64
    public static let defaultGrid = 32
    public static let defaultMaxPoints = 100_000

    public init(
        tile: WebMercatorTile,
        kind: RecordKind,
        text: String? = nil,
        categories: [String] = [],
        datum: CRS.Geographic = .wgs84,
        clusterBelow: Int = TileQuery.defaultClusterBelow,
        extent: Int = TileQuery.defaultExtent,
        buffer: Int = TileQuery.defaultBuffer,
        grid: Int = TileQuery.defaultGrid,
        maxPoints: Int = TileQuery.defaultMaxPoints
    ) {
        self.tile = tile
        self.kind = kind
        self.text = text
        self.categories = categories
        self.datum = datum
        self.clusterBelow = clusterBelow
        self.extent = extent
        self.buffer = buffer
        self.grid = grid
        self.maxPoints = maxPoints
    }

    /// Whether this tile holds clusters rather than points.
    public var isClustered: Bool { tile.z < clusterBelow }
}

/// What receives a tile's records from `SearchEngine.tile`, one call per point, inside the engine's read lock:
/// the bytes it is given are the store's own, valid only during the call.
public protocol TileWriter {
    /// Called first: the names of the category codes the POI calls give.
    mutating func begin(categories: [String])
    /// A POI at (`x`, `y`) in tile units: its id and name as UTF-8, its category's code (nil: none), and in a
    /// clustered tile the count of its cell (1), nil in a tile of points.
    mutating func poi(x: Int, y: Int, id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Int?, count: Int?)
    /// A pin at (`x`, `y`), likewise.
    mutating func pin(x: Int, y: Int, _ pin: PinRecord, count: Int?)
    /// A cell of a clustered tile holding `count` > 1 records, at their mean position.
    mutating func cluster(x: Int, y: Int, count: Int)
}

/// A tile's records by id, as a `TileWriter` that keeps them (tests, and callers that want values).
public struct TileContent: TileWriter, Sendable {
    public struct Point: Sendable {
        /// Position in tile units (outside 0...extent in the buffer).
        public let x: Int
        public let y: Int
        public let id: String
    }

    public struct Cluster: Sendable {
        /// The mean position of its records, in tile units.
        public let x: Int
        public let y: Int
        public let count: Int
        /// The record, when the cell holds one.
        public let id: String?
    }

    /// In record order.
    public var points: [Point] = []
    /// By cell, row after row.
    public var clusters: [Cluster] = []

    public var isEmpty: Bool { points.isEmpty && clusters.isEmpty }

    public init() {}

    public mutating func begin(categories: [String]) {}

    public mutating func poi(x: Int, y: Int, id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Int?, count: Int?) {
        add(x: x, y: y, id: String(decoding: id, as: UTF8.self), count: count)
    }

    public mutating func pin(x: Int, y: Int, _ pin: PinRecord, count: Int?) { add(x: x, y: y, id: pin.id, count: count) }

    public mutating func cluster(x: Int, y: Int, count: Int) { clusters.append(Cluster(x: x, y: y, count: count, id: nil)) }

    private mutating func add(x: Int, y: Int, id: String, count: Int?) {
        if let count { clusters.append(Cluster(x: x, y: y, count: count, id: id)) } else { points.append(Point(x: x, y: y, id: id)) }
    }
}
