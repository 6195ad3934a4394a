/// One layer of a Mapbox Vector Tile (spec 2.1, `vector_tile.proto`) holding points, lines and polygons, written straight into protobuf
/// bytes: no message objects are made, so a tile of ten thousand points costs the bytes it holds.
///
/// The protobuf encoding is written here by hand, not with swift-protobuf: a tile is four messages of a few fields
/// (Tile → Layer → Feature, Value), and going through generated message types would make an object per feature and
/// per value only to serialize them at once (docs/ARCHITECTURE.md, "Vector tiles").
///
/// Keys are declared up front; a feature gives a value for any of them, then its point. A string given with
/// `string(_:_:)` is written for that feature alone, as most are unique (ids, names) and a lookup would cost more than
/// it saves; one many features share (a category) is added once with `value(_:)` and referred to by index. Integers
/// are written once per distinct value.
public struct VectorTileLayer: Sendable {
    public struct Key: Sendable {
        public let name: String
        public init(_ name: String) { self.name = name }
    }

    public let name: String
    public let extent: Int
    public let keys: [Key]
    /// The features' messages, one after another, each with its field tag and length.
    private var features: [UInt8] = []
    /// The values' messages (`Layer.values`), each with its field tag and length.
    private var values: [UInt8] = []
    private var valueCount: UInt32 = 0
    private var uintValues: [UInt64: UInt32] = [:]
    // One feature's parts while it is being written.
    private var tags: [UInt8] = []
    private var geometry: [UInt8] = []
    private var scratch: [UInt8] = []
    public private(set) var featureCount = 0

    public init(name: String, extent: Int = 4096, keys: [Key]) {
        self.name = name
        self.extent = extent
        self.keys = keys
    }

    public var isEmpty: Bool { featureCount == 0 }

    /// A string property of the feature being written: key number `key`, its value as UTF-8 bytes. A feature is
    /// its properties, given first, then `addPoint`.
    public mutating func string(_ key: Int, _ bytes: UnsafeBufferPointer<UInt8>) { addString(key, bytes) }

    /// A string property from part of a byte array (a record's packed bytes).
    public mutating func string(_ key: Int, _ bytes: [UInt8], _ range: Range<Int>) {
        bytes.withUnsafeBufferPointer { addString(key, UnsafeBufferPointer(rebasing: $0[range])) }
    }

    public mutating func string(_ key: Int, _ text: String) {
        var text = text
        text.withUTF8 { addString(key, $0) }
    }

    /// A string value added to the layer once, for features to refer to with `property(_:value:)` (a value the
    /// caller interns itself, as a category by its code).
    public mutating func value(_ text: String) -> UInt32 {
        var text = text
        return text.withUTF8 { appendStringValue($0) }
    }

    /// A property of the feature being written whose value was added with `value(_:)`.
    public mutating func property(_ key: Int, value index: UInt32) {
        Self.varint(UInt64(key), into: &tags)
        Self.varint(UInt64(index), into: &tags)
    }

    /// An unsigned integer property of the feature being written (each distinct value written once per layer).
    public mutating func uint(_ key: Int, _ value: UInt64) { addUInt(key, value) }

    /// Ends the feature being written as a line through `xs`/`ys` (tile units, at least two vertices): a MoveTo, then
    /// one LineTo with every further vertex as a zigzag delta from the one before.
    public mutating func addLine(xs: [Int], ys: [Int]) {
        precondition(xs.count == ys.count && xs.count >= 2, "a line has two vertices or more")
        geometry.removeAll(keepingCapacity: true)
        geometry.append(9)  // MoveTo, one point
        Self.varint(UInt64(Self.zigzag(xs[0])), into: &geometry)
        Self.varint(UInt64(Self.zigzag(ys[0])), into: &geometry)
        Self.varint(UInt64(2 | ((xs.count - 1) << 3)), into: &geometry)  // LineTo, count - 1 points
        for i in 1..<xs.count {
            Self.varint(UInt64(Self.zigzag(xs[i] - xs[i - 1])), into: &geometry)
            Self.varint(UInt64(Self.zigzag(ys[i] - ys[i - 1])), into: &geometry)
        }
        finishFeature(type: 2)  // LINESTRING
    }

    /// Ends the feature being written as a polygon of `rings` (tile units, each ring's first vertex not repeated at its
    /// end, at least three vertices): per ring a MoveTo, one LineTo with the rest as zigzag deltas (from the vertex
    /// before, across rings), and a ClosePath. The caller orders and orients them as the spec asks (4.3.4.4): an
    /// exterior ring of positive area by the surveyor's formula in tile units (clockwise on screen), each followed by
    /// its interior rings of negative area (`Polygons.ring`).
    public mutating func addPolygon(_ rings: [[(x: Int, y: Int)]]) {
        precondition(!rings.isEmpty && rings.allSatisfy { $0.count >= 3 }, "a polygon has a ring, each of three vertices or more")
        geometry.removeAll(keepingCapacity: true)
        var (x, y) = (0, 0)
        for ring in rings {
            geometry.append(9)  // MoveTo, one point
            Self.varint(UInt64(Self.zigzag(ring[0].x - x)), into: &geometry)
            Self.varint(UInt64(Self.zigzag(ring[0].y - y)), into: &geometry)
            Self.varint(UInt64(2 | ((ring.count - 1) << 3)), into: &geometry)  // LineTo, count - 1 points
            for i in 1..<ring.count {
                Self.varint(UInt64(Self.zigzag(ring[i].x - ring[i - 1].x)), into: &geometry)
                Self.varint(UInt64(Self.zigzag(ring[i].y - ring[i - 1].y)), into: &geometry)
            }
            geometry.append(15)  // ClosePath: (7 & 0x7) | (1 << 3)
            (x, y) = ring[ring.count - 1]
        }
        finishFeature(type: 3)  // POLYGON
    }

    /// Ends the feature being written: a point at (`x`, `y`) in tile units with the properties given since the last.
    public mutating func addPoint(x: Int, y: Int) {
        // MoveTo, one point: command integer (1 & 0x7) | (1 << 3) = 9, then the zigzag-encoded position.
        geometry.removeAll(keepingCapacity: true)
        geometry.append(9)
        Self.varint(UInt64(Self.zigzag(x)), into: &geometry)
        Self.varint(UInt64(Self.zigzag(y)), into: &geometry)
        finishFeature(type: 1)  // POINT
    }

    /// Writes the feature of the tags and geometry gathered, with its geometry type.
    private mutating func finishFeature(type: UInt8) {
        scratch.removeAll(keepingCapacity: true)
        if !tags.isEmpty {
            scratch.append(0x12)  // Feature.tags, packed
            Self.varint(UInt64(tags.count), into: &scratch)
            scratch += tags
        }
        scratch.append(0x18)  // Feature.type
        scratch.append(type)
        scratch.append(0x22)  // Feature.geometry, packed
        Self.varint(UInt64(geometry.count), into: &scratch)
        scratch += geometry
        features.append(0x12)  // Layer.features
        Self.varint(UInt64(scratch.count), into: &features)
        features += scratch
        featureCount += 1
        tags.removeAll(keepingCapacity: true)
    }

    // Bytes as a buffer pointer, not a generic collection: across the module boundary a generic parameter is not
    // specialized, and every byte went through a protocol witness (3 µs per point on 1 M POIs at zoom 10).
    private mutating func addString(_ key: Int, _ bytes: UnsafeBufferPointer<UInt8>) {
        let index = appendStringValue(bytes)
        Self.varint(UInt64(key), into: &tags)
        Self.varint(UInt64(index), into: &tags)
    }

    private mutating func addUInt(_ key: Int, _ value: UInt64) {
        let index: UInt32
        if let known = uintValues[value] {
            index = known
        } else {
            // Value.uint_value (field 5, varint) in a length-delimited Layer.values entry.
            var message: [UInt8] = [0x28]
            Self.varint(value, into: &message)
            values.append(0x22)
            Self.varint(UInt64(message.count), into: &values)
            values += message
            index = valueCount
            valueCount += 1
            uintValues[value] = index
        }
        Self.varint(UInt64(key), into: &tags)
        Self.varint(UInt64(index), into: &tags)
    }

    private mutating func appendStringValue(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        // Layer.values entry holding Value.string_value (field 1).
        let length = UInt64(bytes.count)
        values.append(0x22)
        Self.varint(1 + UInt64(Self.varintSize(length)) + length, into: &values)
        values.append(0x0A)
        Self.varint(length, into: &values)
        values.append(contentsOf: bytes)
        defer { valueCount += 1 }
        return valueCount
    }

    /// The layer as a `Tile.layers` entry (field 3), ready to be concatenated with other layers into a tile.
    public func encoded() -> [UInt8] {
        var body: [UInt8] = [0x78, 2]  // Layer.version = 2
        body.append(0x0A)  // Layer.name
        Self.varint(UInt64(name.utf8.count), into: &body)
        body += name.utf8
        body += features
        for key in keys {
            body.append(0x1A)  // Layer.keys
            Self.varint(UInt64(key.name.utf8.count), into: &body)
            body += key.name.utf8
        }
        body += values
        body.append(0x28)  // Layer.extent
        Self.varint(UInt64(extent), into: &body)
        var out: [UInt8] = [0x1A]  // Tile.layers
        out.reserveCapacity(body.count + 6)
        Self.varint(UInt64(body.count), into: &out)
        out += body
        return out
    }

    // MARK: Protobuf's wire format

    @inline(__always)
    static func varint(_ value: UInt64, into out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func varintSize(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    @inline(__always)
    static func zigzag(_ value: Int) -> UInt32 { UInt32(truncatingIfNeeded: (value << 1) ^ (value >> 63)) }
}
