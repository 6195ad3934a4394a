import OSM

/// The nodes of an OpenStreetMap import as the SQLite store keeps them for change files (`osm_node_block`): runs of
/// up to `NodeBlock.size` nodes sorted by id, one BLOB a run, keyed by its first id. Each node keeps its location, the
/// number its `addr:housenumber` starts with (the ends of interpolation lines), and the ways with output that use it
/// (what a moved node changes).
///
/// Format (version 1): the byte 1, a varint of the count, then per node zigzag varints of the differences from the
/// node before of its id, latitude and longitude (1e-7°), a varint of its house number plus one (0: none), a varint
/// of the number of its ways and their ids as zigzag differences from the way before in the block. Neighbouring ids
/// are usually neighbouring points of one way: a node takes 6–9 bytes, against 16 for an id and two coordinates and
/// ~20 for a row of a table (see docs/ARCHITECTURE.md, "OpenStreetMap that stays current").
public struct NodeBlock: MirrorBlock, Equatable, Sendable {
    public static let size = 128
    package static let version: UInt8 = 1
    package static let table = "osm_node_block"

    public var ids: [Int64] = []
    /// Latitude and longitude in 1e-7°.
    public var latitudes: [Int32] = []
    public var longitudes: [Int32] = []
    /// The leading number of the node's house number, or -1.
    public var numbers: [Int32] = []
    /// The ways with output (and members of multipolygons with output) that use the node, ascending.
    public var ways: [[Int64]] = []

    public init() {}

    public var count: Int { ids.count }

    public mutating func insert(at index: Int, id: Int64, latitude: Int32, longitude: Int32, number: Int32, ways nodeWays: [Int64]) {
        ids.insert(id, at: index)
        latitudes.insert(latitude, at: index)
        longitudes.insert(longitude, at: index)
        numbers.insert(number, at: index)
        ways.insert(nodeWays, at: index)
    }

    public mutating func remove(at index: Int) {
        ids.remove(at: index)
        latitudes.remove(at: index)
        longitudes.remove(at: index)
        numbers.remove(at: index)
        ways.remove(at: index)
    }

    /// The nodes from `start` on, removed from this block (to split a block grown too large).
    public mutating func split(at start: Int) -> NodeBlock {
        var tail = NodeBlock()
        tail.ids = Array(ids[start...])
        tail.latitudes = Array(latitudes[start...])
        tail.longitudes = Array(longitudes[start...])
        tail.numbers = Array(numbers[start...])
        tail.ways = Array(ways[start...])
        ids.removeSubrange(start...)
        latitudes.removeSubrange(start...)
        longitudes.removeSubrange(start...)
        numbers.removeSubrange(start...)
        ways.removeSubrange(start...)
        return tail
    }

    public func encoded() -> [UInt8] {
        var out = VarintWriter()
        out.bytes.reserveCapacity(ids.count * 9 + 4)
        out.bytes.append(Self.version)
        out.varint(UInt64(ids.count))
        var previous = Previous()
        for i in ids.indices {
            Self.append(id: ids[i], latitude: latitudes[i], longitude: longitudes[i], number: numbers[i], ways: ways[i], to: &out, &previous)
        }
        return out.bytes
    }

    /// The values of the node before, which the next is written against.
    package struct Previous {
        var id: Int64 = 0
        var latitude: Int64 = 0
        var longitude: Int64 = 0
        var way: Int64 = 0
    }

    /// One node as `encoded` writes it (an import writes its blocks straight from its arrays with this).
    package static func append(
        id: Int64,
        latitude: Int32,
        longitude: Int32,
        number: Int32,
        ways: some Collection<Int64>,
        to out: inout VarintWriter,
        _ previous: inout Previous
    ) {
        out.signed(id &- previous.id)
        out.signed(Int64(latitude) - previous.latitude)
        out.signed(Int64(longitude) - previous.longitude)
        (previous.id, previous.latitude, previous.longitude) = (id, Int64(latitude), Int64(longitude))
        out.varint(UInt64(Int64(number) + 1))
        out.varint(UInt64(ways.count))
        for w in ways {
            out.signed(w &- previous.way)
            previous.way = w
        }
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> NodeBlock {
        var reader = VarintReader(bytes: bytes)
        guard try reader.byte() == version else { throw AddressBlock.CorruptBlock(reason: "node block of an unknown version") }
        let count = Int(try reader.varint())
        guard count <= 1 << 20 else { throw AddressBlock.CorruptBlock(reason: "node block of \(count) nodes") }
        var block = NodeBlock()
        block.ids.reserveCapacity(count)
        block.latitudes.reserveCapacity(count)
        block.longitudes.reserveCapacity(count)
        block.numbers.reserveCapacity(count)
        block.ways.reserveCapacity(count)
        var (id, latitude, longitude, way): (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
        for _ in 0..<count {
            id &+= try reader.signed()
            latitude &+= try reader.signed()
            longitude &+= try reader.signed()
            let number = Int64(truncatingIfNeeded: try reader.varint()) - 1
            let wayCount = Int(try reader.varint())
            guard wayCount <= 1 << 20 else { throw AddressBlock.CorruptBlock(reason: "node \(id) in \(wayCount) ways") }
            var nodeWays: [Int64] = []
            nodeWays.reserveCapacity(wayCount)
            for _ in 0..<wayCount {
                way &+= try reader.signed()
                nodeWays.append(way)
            }
            block.ids.append(id)
            block.latitudes.append(Int32(truncatingIfNeeded: latitude))
            block.longitudes.append(Int32(truncatingIfNeeded: longitude))
            block.numbers.append(Int32(truncatingIfNeeded: number))
            block.ways.append(nodeWays)
        }
        return block
    }
}

/// A run of objects sorted by id, one BLOB of a mirror table keyed by its first id (`OSMMirror.BlockTable`).
package protocol MirrorBlock {
    init()
    /// The objects a block holds at most as an import writes it; a change file splits one grown past twice this.
    static var size: Int { get }
    static var table: String { get }
    var ids: [Int64] { get }
    var count: Int { get }
    func encoded() -> [UInt8]
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> Self
    /// The objects from `start` on, removed from this block.
    mutating func split(at start: Int) -> Self
}

extension MirrorBlock {
    /// The slot of `id`, or where it would go.
    package func slot(of id: Int64) -> (index: Int, found: Bool) {
        var low = 0
        var high = ids.count
        while low < high {
            let mid = (low + high) >> 1
            if ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return (low, low < ids.count && ids[low] == id)
    }
}

/// Ways as the mirror keeps them (`osm_way_block`): runs of up to 32 ways sorted by id (a way of a street or a forest
/// carries hundreds of node ids: at 256 a block was ~27 kB, at 64 ~6.7 kB, rewritten whole for one changed way), each
/// with its node ids and, for the ways with output, its tags.
///
/// Format (version 1): the byte 1, a varint of the count, then per way a zigzag varint of its id's difference from the
/// way before, a varint of its node count and the node ids as zigzag differences (each from the node id before, across
/// ways: a way's nodes usually follow the previous way's), then 0 (no tags kept) or 1 and the tags (a varint count,
/// then each key and value as a varint length and UTF-8).
public struct WayBlock: MirrorBlock, Equatable, Sendable {
    public static let size = 32
    package static let version: UInt8 = 1
    package static let table = "osm_way_block"

    public var ids: [Int64] = []
    public var refs: [[Int64]] = []
    public var tags: [[OSMTag]?] = []

    public init() {}

    public var count: Int { ids.count }

    public mutating func split(at start: Int) -> WayBlock {
        var tail = WayBlock()
        tail.ids = Array(ids[start...])
        tail.refs = Array(refs[start...])
        tail.tags = Array(tags[start...])
        ids.removeSubrange(start...)
        refs.removeSubrange(start...)
        tags.removeSubrange(start...)
        return tail
    }

    public func encoded() -> [UInt8] {
        var out = VarintWriter()
        out.bytes.append(Self.version)
        out.varint(UInt64(ids.count))
        var (id, ref): (Int64, Int64) = (0, 0)
        for i in ids.indices {
            out.signed(ids[i] &- id)
            id = ids[i]
            Self.append(refs[i], tags[i], to: &out, previousRef: &ref)
        }
        return out.bytes
    }

    /// One way's node ids and tags, as `encoded` writes them.
    package static func append(_ refs: some Collection<Int64>, _ tags: [OSMTag]?, to out: inout VarintWriter, previousRef: inout Int64) {
        out.varint(UInt64(refs.count))
        for r in refs {
            out.signed(r &- previousRef)
            previousRef = r
        }
        guard let tags else { return out.varint(0) }
        out.varint(1)
        out.varint(UInt64(tags.count))
        for tag in tags {
            out.text(tag.key)
            out.text(tag.value)
        }
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> WayBlock {
        var reader = VarintReader(bytes: bytes)
        guard try reader.byte() == version else { throw AddressBlock.CorruptBlock(reason: "way block of an unknown version") }
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "way block of \(count) ways in \(bytes.count) bytes") }
        var block = WayBlock()
        var (id, ref): (Int64, Int64) = (0, 0)
        for _ in 0..<count {
            id &+= try reader.signed()
            let refCount = Int(try reader.varint())
            guard refCount <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "way \(id) of \(refCount) nodes") }
            var wayRefs: [Int64] = []
            wayRefs.reserveCapacity(refCount)
            for _ in 0..<refCount {
                ref &+= try reader.signed()
                wayRefs.append(ref)
            }
            var wayTags: [OSMTag]?
            if try reader.varint() != 0 {
                let tagCount = Int(try reader.varint())
                guard tagCount <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "way \(id) with \(tagCount) tags") }
                var list: [OSMTag] = []
                for _ in 0..<tagCount { list.append(OSMTag(key: try reader.text(), value: try reader.text())) }
                wayTags = list
            }
            block.ids.append(id)
            block.refs.append(wayRefs)
            block.tags.append(wayTags)
        }
        return block
    }
}

/// LEB128 varints and zigzag-coded signed ones, for the OSM mirror's blobs.
package struct VarintWriter {
    package var bytes: [UInt8] = []

    package mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }

    package mutating func signed(_ value: Int64) { Varint.appendSigned(value, to: &bytes) }

    package mutating func text(_ value: String) { Varint.appendText(value, to: &bytes) }
}

package struct VarintReader {
    package let bytes: UnsafeRawBufferPointer
    package var at = 0

    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package var atEnd: Bool { at >= bytes.count }

    package mutating func byte() throws(AddressBlock.CorruptBlock) -> UInt8 {
        guard at < bytes.count else { throw AddressBlock.CorruptBlock(reason: "ends early") }
        defer { at += 1 }
        return bytes[at]
    }

    package mutating func varint() throws(AddressBlock.CorruptBlock) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw AddressBlock.CorruptBlock(reason: "a varint longer than 10 bytes") }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    package mutating func signed() throws(AddressBlock.CorruptBlock) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    package mutating func skipText() throws(AddressBlock.CorruptBlock) {
        let length = Int(try varint())
        guard length <= bytes.count - at else { throw AddressBlock.CorruptBlock(reason: "a text longer than its block") }
        at += length
    }

    package mutating func text() throws(AddressBlock.CorruptBlock) -> String {
        let length = Int(try varint())
        guard length <= bytes.count - at else { throw AddressBlock.CorruptBlock(reason: "a text longer than its block") }
        defer { at += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<at + length]), as: UTF8.self)
    }
}

/// How the mirror keeps a relation's members and tags: varints.
public enum OSMMirrorCoding {
    public static func tags(_ tags: [OSMTag]) -> [UInt8] {
        var out = VarintWriter()
        out.varint(UInt64(tags.count))
        for tag in tags {
            out.text(tag.key)
            out.text(tag.value)
        }
        return out.bytes
    }

    public static func tags(from bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> [OSMTag] {
        var reader = VarintReader(bytes: bytes)
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(count) tags in \(bytes.count) bytes") }
        var tags: [OSMTag] = []
        tags.reserveCapacity(count)
        for _ in 0..<count { tags.append(OSMTag(key: try reader.text(), value: try reader.text())) }
        return tags
    }

    public static func members(_ members: [OSMRelation.Member]) -> [UInt8] {
        var out = VarintWriter()
        out.varint(UInt64(members.count))
        for member in members {
            out.varint(UInt64(member.type.rawValue))
            out.signed(member.ref)
            out.text(member.role)
        }
        return out.bytes
    }

    public static func members(from bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> [OSMRelation.Member] {
        var reader = VarintReader(bytes: bytes)
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(count) members in \(bytes.count) bytes") }
        var members: [OSMRelation.Member] = []
        members.reserveCapacity(count)
        for _ in 0..<count {
            guard let type = OSMRelation.MemberType(rawValue: Int(try reader.varint())) else {
                throw AddressBlock.CorruptBlock(reason: "a member of an unknown type")
            }
            members.append(OSMRelation.Member(type: type, ref: try reader.signed(), role: try reader.text()))
        }
        return members
    }
}
