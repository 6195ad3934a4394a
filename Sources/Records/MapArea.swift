import GeoCore

/// An area of the map an OpenStreetMap import draws beneath its streets (the `base` tiles' `water` and `buildings`
/// layers): a closed way or multipolygon relation tagged as water or a building, or a piece of sea made from the
/// extract's coastline (`Coastline`).
public struct MapArea: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// `natural=water`, `waterway=riverbank`, `landuse=reservoir|basin`, and the sea.
        case water
        /// `building=*` (not `building=no`).
        case building
    }

    /// A closed ring of (latitude, longitude) vertices, the first not repeated at the end.
    public struct Ring: Sendable, Equatable {
        /// An outer ring bounds the area; the inner rings after it (up to the next outer) are its holes.
        public var outer: Bool
        public var points: [Coordinate2]

        public init(outer: Bool, points: [Coordinate2]) { (self.outer, self.points) = (outer, points) }
    }

    /// `osm-w…` or `osm-r…`; `osm-sea-N` for the sea.
    public var id: String
    public var kind: Kind
    public var name: String?
    /// Each outer ring followed by its holes.
    public var rings: [Ring]

    public init(id: String, kind: Kind, name: String? = nil, rings: [Ring]) {
        (self.id, self.kind, self.name, self.rings) = (id, kind, name, rings)
    }

    /// The box around every vertex (nil: no vertices).
    public var bounds: BoundingBox? {
        var (west, south, east, north) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
        for ring in rings {
            for p in ring.points {
                west = min(west, p.longitude)
                east = max(east, p.longitude)
                south = min(south, p.latitude)
                north = max(north, p.latitude)
            }
        }
        return west <= east ? BoundingBox(uncheckedWest: west, south: south, east: east, north: north) : nil
    }

    /// The prefix of the sea's ids.
    public static let seaPrefix = "osm-sea-"

    /// The kind of area a way's or relation's tags make, if any.
    public static func kind(_ tags: (String) -> String?) -> Kind? {
        if let building = tags("building"), building != "no" { return .building }
        if tags("natural") == "water" || tags("waterway") == "riverbank" { return .water }
        if let landuse = tags("landuse"), landuse == "reservoir" || landuse == "basin" { return .water }
        return nil
    }
}

/// Areas in blocks as the stores keep them (SQLite's `map_area_block`, PostgreSQL's `area_block`): per area,
/// varints of its id, kind, name (0, or 1 and the text) and rings; per ring, 1 for outer or 0, its vertex count and
/// the vertices as zigzag differences in 1e-7° (OSM's precision, as `StreetBlock`). Format version 1: the byte 1 first.
public enum MapAreaBlock {
    public static let size = 20_000
    static let version: UInt8 = 1
    /// What goes before one area's bytes (`AreaList.withBytes`) to make them a block of that area: the version and
    /// the count 1.
    public static let oneAreaHeader: [UInt8] = [version, 1]

    public static func encode(_ areas: some Collection<MapArea>) -> [UInt8] {
        var out = VarintWriter()
        out.bytes.append(version)
        out.varint(UInt64(areas.count))
        for area in areas { body(area, &out) }
        return out.bytes
    }

    /// A block of areas already coded (`AreaList`'s bytes): the version, their count, then their bytes.
    static func block(count: Int, bodies: UnsafeRawBufferPointer) -> [UInt8] {
        var out = VarintWriter()
        out.bytes.reserveCapacity(bodies.count + 6)
        out.bytes.append(version)
        out.varint(UInt64(count))
        out.bytes.append(contentsOf: bodies)
        return out.bytes
    }

    /// One area's bytes in a block.
    static func body(_ area: MapArea, _ out: inout VarintWriter) {
        out.text(area.id)
        out.text(area.kind.rawValue)
        StreetBlock.optional(area.name, &out)
        out.varint(UInt64(area.rings.count))
        for ring in area.rings {
            out.varint(ring.outer ? 1 : 0)
            out.vertices(ring.points)
        }
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer, into areas: inout [MapArea]) throws(AddressBlock.CorruptBlock) {
        try forEachArea(bytes) { reader throws(AddressBlock.CorruptBlock) in areas.append(try area(&reader)) }
    }

    /// The id of the block's first area, read without its rings (nil: a damaged or empty block).
    public static func firstID(_ bytes: UnsafeRawBufferPointer) -> String? {
        var reader = VarintReader(bytes: bytes)
        guard (try? reader.byte()) == version, let count = try? reader.varint(), count > 0 else { return nil }
        return try? reader.text()
    }

    /// Hands `body` each area's id (its UTF-8 bytes) in turn, the rest of the area stepped over without being made:
    /// what a change file reads of the blocks its objects' spans reach, most of which hold none of them.
    public static func forEachID(
        _ bytes: UnsafeRawBufferPointer,
        _ body: (UnsafeBufferPointer<UInt8>) -> Void
    ) throws(AddressBlock.CorruptBlock) {
        try forEachArea(bytes) { reader throws(AddressBlock.CorruptBlock) in
            let length = Int(try reader.varint())
            guard length <= reader.bytes.count - reader.at else { throw AddressBlock.CorruptBlock(reason: "an id longer than its block") }
            body(UnsafeRawBufferPointer(rebasing: reader.bytes[reader.at..<reader.at + length]).bindMemory(to: UInt8.self))
            reader.at += length
            try reader.skipText()  // kind
            if try reader.varint() != 0 { try reader.skipText() }  // name
            for _ in 0..<(try reader.varint()) {
                _ = try reader.varint()  // outer
                let vertices = try reader.varint()
                guard vertices <= UInt64(reader.bytes.count) else { throw AddressBlock.CorruptBlock(reason: "\(vertices) vertices") }
                for _ in 0..<2 * vertices { _ = try reader.varint() }
            }
        }
    }

    /// Hands `body` a reader at each area of the block in turn; `body` reads the area.
    static func forEachArea(
        _ bytes: UnsafeRawBufferPointer,
        _ body: (inout VarintReader) throws(AddressBlock.CorruptBlock) -> Void
    ) throws(AddressBlock.CorruptBlock) {
        var reader = VarintReader(bytes: bytes)
        guard try reader.byte() == version else { throw AddressBlock.CorruptBlock(reason: "area block of an unknown version") }
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(count) areas in \(bytes.count) bytes") }
        for _ in 0..<count { try body(&reader) }
    }

    /// The area at the reader (`body`'s bytes).
    static func area(_ reader: inout VarintReader) throws(AddressBlock.CorruptBlock) -> MapArea {
        let id = try reader.text()
        let kindText = try reader.text()
        guard let kind = MapArea.Kind(rawValue: kindText) else { throw AddressBlock.CorruptBlock(reason: "area \(id) of kind \(kindText)") }
        let name = try reader.varint() == 0 ? nil : try reader.text()
        let ringCount = Int(try reader.varint())
        guard ringCount <= reader.bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(ringCount) rings") }
        var rings: [MapArea.Ring] = []
        rings.reserveCapacity(ringCount)
        for _ in 0..<ringCount {
            let outer = try reader.varint() == 1
            rings.append(MapArea.Ring(outer: outer, points: try reader.vertices()))
        }
        return MapArea(id: id, kind: kind, name: name, rings: rings)
    }
}
