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
public struct NodeBlock: Equatable, Sendable {
    public static let size = 256
    static let version: UInt8 = 1

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

    /// The slot of `id`, or where it would go.
    public func slot(of id: Int64) -> (index: Int, found: Bool) {
        var low = 0
        var high = ids.count
        while low < high {
            let mid = (low + high) >> 1
            if ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return (low, low < ids.count && ids[low] == id)
    }

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
        var (id, latitude, longitude, way): (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
        for i in ids.indices {
            out.signed(ids[i] - id)
            out.signed(Int64(latitudes[i]) - latitude)
            out.signed(Int64(longitudes[i]) - longitude)
            (id, latitude, longitude) = (ids[i], Int64(latitudes[i]), Int64(longitudes[i]))
            out.varint(UInt64(Int64(numbers[i]) + 1))
            out.varint(UInt64(ways[i].count))
            for w in ways[i] {
                out.signed(w - way)
                way = w
            }
        }
        return out.bytes
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

/// LEB128 varints and zigzag-coded signed ones, for the OSM mirror's blobs.
struct VarintWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func text(_ value: String) {
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }
}

struct VarintReader {
    let bytes: UnsafeRawBufferPointer
    var at = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { at >= bytes.count }

    mutating func byte() throws(AddressBlock.CorruptBlock) -> UInt8 {
        guard at < bytes.count else { throw AddressBlock.CorruptBlock(reason: "ends early") }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func varint() throws(AddressBlock.CorruptBlock) -> UInt64 {
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

    mutating func signed() throws(AddressBlock.CorruptBlock) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    mutating func text() throws(AddressBlock.CorruptBlock) -> String {
        let length = Int(try varint())
        guard length <= bytes.count - at else { throw AddressBlock.CorruptBlock(reason: "a text longer than its block") }
        defer { at += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<at + length]), as: UTF8.self)
    }
}

/// How the mirror keeps a way's node ids, a relation's members and an object's tags: varints.
public enum OSMMirrorCoding {
    public static func refs(_ refs: [Int64]) -> [UInt8] {
        var out = VarintWriter()
        out.varint(UInt64(refs.count))
        var previous: Int64 = 0
        for ref in refs {
            out.signed(ref &- previous)
            previous = ref
        }
        return out.bytes
    }

    public static func refs(from bytes: UnsafeRawBufferPointer) throws(AddressBlock.CorruptBlock) -> [Int64] {
        var reader = VarintReader(bytes: bytes)
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "a way of \(count) nodes in \(bytes.count) bytes") }
        var refs: [Int64] = []
        refs.reserveCapacity(count)
        var previous: Int64 = 0
        for _ in 0..<count {
            previous &+= try reader.signed()
            refs.append(previous)
        }
        return refs
    }

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
