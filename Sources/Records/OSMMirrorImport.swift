import Foundation
import GeoCore
import OSM

/// What an OpenStreetMap import keeps so that change files can be applied to it later: every node's location (in
/// `NodeBlock`s), every way's node ids and the tags of those with output, every relation and the members and tags of
/// multipolygons with output, which ways use a node and which relations a way — the objects as the extract had them.
/// A change file then re-converts only the objects it touches and those built from them (see
/// docs/ARCHITECTURE.md, "OpenStreetMap that stays current").
///
/// Tables (migration v8): `osm_node_block(first, count, data)`, `osm_way_block(first, count, data)`,
/// `osm_relation(id, members, tags)`, `osm_member(way, relation)` and `osm_state` (the replication sequence and the
/// data's timestamp).
public struct OSMMirrorImport: Sendable {
    /// Node ids ascending; latitude and longitude in 1e-7°, interleaved.
    public var nodeIDs: [Int64] = []
    public var coordinates: [Int32] = []
    /// House numbers of nodes (their leading number): ids ascending, beside their numbers.
    public var numberIDs: [Int64] = []
    public var numberValues: [Int] = []
    /// Every way: ids in file order, `starts[i]..<starts[i + 1]` its node ids in `refs`.
    public var wayIDs: [Int64] = []
    public var wayStarts: [Int] = [0]
    public var wayRefs: [Int64] = []
    /// The tags of the ways with output (POIs, houses, streets, interpolation lines), by way id.
    public var wayTags: [Int64: [OSMTag]] = [:]
    /// Every relation: members and tags kept for multipolygons with output, nil for the rest.
    public var relations: [(id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?)] = []
    /// The `natural=coastline` ways (`osm_coastline`), which the sea is made from again when a change file touches one.
    public var coastlineWays: [Int64] = []
    public var state = OSMMirrorState()

    public init() {}
}

/// Where the mirrored data stands in OpenStreetMap's history.
public struct OSMMirrorState: Sendable, Equatable {
    /// The replication sequence number of the last change applied (or the extract's), if known.
    public var sequence: Int?
    /// The newest OSM timestamp of the data (ISO 8601), if known.
    public var timestamp: String?
    /// The replication source followed (a URL or a directory), if any.
    public var source: String?
    /// The extract's box (its header's, else its nodes'), which the sea is closed along (`Coastline`).
    public var box: Coastline.Box?

    public init(sequence: Int? = nil, timestamp: String? = nil, source: String? = nil, box: Coastline.Box? = nil) {
        (self.sequence, self.timestamp, self.source, self.box) = (sequence, timestamp, source, box)
    }
}

/// An import's mirror as the blocks and rows the store writes: encoded on any thread (the encoding is most of the
/// mirror's cost at import), written by `CatalogStore.replaceOSMMirror`.
public struct EncodedOSMMirror: Sendable {
    package struct Block: Sendable {
        package let first: Int64
        package let count: Int
        package let bytes: [UInt8]
    }

    package var nodeBlocks: [Block] = []
    package var wayBlocks: [Block] = []
    package var relations: [(id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?)] = []
    package var coastlineWays: [Int64] = []
    /// Nil: no mirror (an import with `--no-updates`), so change files are refused.
    package var state: OSMMirrorState? = OSMMirrorState()
    /// Bytes of the blocks, for reports.
    public var bytes: Int { (nodeBlocks + wayBlocks).reduce(0) { $0 + $1.bytes.count } }

    /// No mirror: what replaces an earlier import's when an extract is imported without one.
    public static let none: EncodedOSMMirror = {
        var empty = EncodedOSMMirror(OSMMirrorImport())
        empty.state = nil
        return empty
    }()

    public init(_ data: OSMMirrorImport) {
        relations = data.relations
        coastlineWays = data.coastlineWays
        state = data.state
        var memberWays = Set<Int64>()
        for r in data.relations { for m in r.members ?? [] where m.type == .way { memberWays.insert(m.ref) } }
        // The ways in id order (an extract sorted by type and id has them so already).
        var order = Array(data.wayIDs.indices)
        if data.wayIDs.indices.dropFirst().contains(where: { data.wayIDs[$0] <= data.wayIDs[$0 - 1] }) {
            order.sort { data.wayIDs[$0] < data.wayIDs[$1] || (data.wayIDs[$0] == data.wayIDs[$1] && $0 < $1) }
            // The last of equal ids wins, as in a re-read.
            order = order.enumerated().filter { k, i in k + 1 == order.count || data.wayIDs[order[k + 1]] != data.wayIDs[i] }.map(\.element)
        }
        nodeBlocks = Self.nodeBlocks(data, order: order, memberWays: memberWays)
        var out = VarintWriter()
        var (count, first, previousID, previousRef): (Int, Int64, Int64, Int64) = (0, 0, 0, 0)
        for i in order {
            if count == 0 {
                out = VarintWriter()
                out.bytes.append(WayBlock.version)
                first = data.wayIDs[i]
                (previousID, previousRef) = (0, 0)
            }
            out.signed(data.wayIDs[i] &- previousID)
            previousID = data.wayIDs[i]
            WayBlock.append(
                data.wayRefs[data.wayStarts[i]..<data.wayStarts[i + 1]],
                data.wayTags[data.wayIDs[i]],
                to: &out,
                previousRef: &previousRef
            )
            count += 1
            if count == WayBlock.size {
                wayBlocks.append(Self.block(first, count, out))
                count = 0
            }
        }
        if count > 0 { wayBlocks.append(Self.block(first, count, out)) }
    }

    /// A block's bytes: the version byte, the count, then the objects `out` holds after its version byte.
    package static func block(_ first: Int64, _ count: Int, _ out: VarintWriter) -> Block {
        var head = VarintWriter()
        head.bytes.reserveCapacity(out.bytes.count + 4)
        head.bytes.append(out.bytes[0])
        head.varint(UInt64(count))
        head.bytes.append(contentsOf: out.bytes[1...])
        return Block(first: first, count: count, bytes: head.bytes)
    }

    /// The nodes in blocks, each with the ways that use it — the ways with tags that make output, and the members of
    /// the multipolygons kept — found by a counting sort on the nodes' slots (no sort of (node, way) pairs).
    package static func nodeBlocks(_ data: OSMMirrorImport, order: [Int], memberWays: Set<Int64>) -> [Block] {
        let nodes = data.nodeIDs
        var counts = [Int32](repeating: 0, count: nodes.count + 1)
        var slots: [Int32] = []
        var owners: [Int64] = []
        var hint = -1
        func slot(_ id: Int64) -> Int? {
            var s = hint + 1
            if !(s >= 0 && s < nodes.count && nodes[s] == id) {
                var (low, high) = (0, nodes.count)
                while low < high {
                    let mid = (low + high) >> 1
                    if nodes[mid] < id { low = mid + 1 } else { high = mid }
                }
                guard low < nodes.count, nodes[low] == id else { return nil }
                s = low
            }
            hint = s
            return s
        }
        for i in order where data.wayTags[data.wayIDs[i]] != nil || memberWays.contains(data.wayIDs[i]) {
            let refs = data.wayRefs[data.wayStarts[i]..<data.wayStarts[i + 1]]
            for (k, ref) in zip(refs.indices, refs) {
                // A closed way names its first node again at its end: once.
                if k == refs.endIndex - 1 && refs.count > 1 && ref == refs.first { continue }
                guard let s = slot(ref) else { continue }
                slots.append(Int32(s))
                owners.append(data.wayIDs[i])
                counts[s + 1] += 1
            }
        }
        for i in 1..<counts.count { counts[i] += counts[i - 1] }
        var ways = [Int64](repeating: 0, count: slots.count)
        var next = counts
        for (s, way) in zip(slots, owners) {
            ways[Int(next[Int(s)])] = way
            next[Int(s)] += 1
        }
        slots = []
        owners = []
        var blocks: [Block] = []
        var out = VarintWriter()
        var previous = NodeBlock.Previous()
        var (count, first, n): (Int, Int64, Int) = (0, 0, 0)
        for (i, id) in nodes.enumerated() {
            if count == 0 {
                out = VarintWriter()
                out.bytes.reserveCapacity(NodeBlock.size * 10)
                out.bytes.append(NodeBlock.version)
                first = id
                previous = NodeBlock.Previous()
            }
            while n < data.numberIDs.count && data.numberIDs[n] < id { n += 1 }
            let number = n < data.numberIDs.count && data.numberIDs[n] == id ? Int32(clamping: data.numberValues[n]) : -1
            let nodeWays = ways[Int(counts[i])..<Int(counts[i + 1])]
            NodeBlock.append(
                id: id,
                latitude: data.coordinates[2 * i],
                longitude: data.coordinates[2 * i + 1],
                number: number,
                ways: nodeWays,
                to: &out,
                &previous
            )
            count += 1
            if count == NodeBlock.size {
                blocks.append(block(first, count, out))
                count = 0
            }
        }
        if count > 0 { blocks.append(block(first, count, out)) }
        return blocks
    }
}
