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
    /// Every node's location, ids ascending (`finish()`ed).
    public var nodes = NodeLocationStore()
    /// House numbers of nodes (their leading number): ids ascending, beside their numbers.
    public var numberIDs: [Int64] = []
    public var numberValues: [Int] = []
    /// Every way's node ids, in file order.
    public var ways = WayTable()
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
        let wayIDs = data.ways.ids
        var order = Array(wayIDs.indices)
        if wayIDs.indices.dropFirst().contains(where: { wayIDs[$0] <= wayIDs[$0 - 1] }) {
            order.sort { wayIDs[$0] < wayIDs[$1] || (wayIDs[$0] == wayIDs[$1] && $0 < $1) }
            // The last of equal ids wins, as in a re-read.
            order = order.enumerated().filter { k, i in k + 1 == order.count || wayIDs[order[k + 1]] != wayIDs[i] }.map(\.element)
        }
        nodeBlocks = Self.nodeBlocks(data, order: order, memberWays: memberWays)
        var out = VarintWriter()
        var (count, first, previousID, previousRef): (Int, Int64, Int64, Int64) = (0, 0, 0, 0)
        for i in order {
            if count == 0 {
                out = VarintWriter()
                out.bytes.append(WayBlock.version)
                first = wayIDs[i]
                (previousID, previousRef) = (0, 0)
            }
            out.signed(wayIDs[i] &- previousID)
            previousID = wayIDs[i]
            WayBlock.append(
                data.ways.refs(at: i),
                data.wayTags[wayIDs[i]],
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
    /// the multipolygons kept — as (node, way) pairs sorted by node then way: only the nodes of those ways take a
    /// pair, not every node a slot (the untagged ways of a country's nodes have none).
    package static func nodeBlocks(_ data: OSMMirrorImport, order: [Int], memberWays: Set<Int64>) -> [Block] {
        let wayIDs = data.ways.ids
        var uses: [(node: Int64, way: Int64)] = []
        for i in order where data.wayTags[wayIDs[i]] != nil || memberWays.contains(wayIDs[i]) {
            let refs = data.ways.refs(at: i)
            for (k, ref) in refs.enumerated() {
                // A closed way names its first node again at its end: once.
                if k == refs.count - 1 && refs.count > 1 && ref == refs[0] { continue }
                uses.append((ref, wayIDs[i]))
            }
        }
        // Ways in `order` are ascending, so a stable sort by node keeps each node's ways in way order.
        uses.sort { $0.node < $1.node || ($0.node == $1.node && $0.way < $1.way) }
        var use = 0
        var blocks: [Block] = []
        var out = VarintWriter()
        var previous = NodeBlock.Previous()
        var (count, first, n): (Int, Int64, Int) = (0, 0, 0)
        var nodeWays: [Int64] = []
        data.nodes.forEachNode { id, latitude, longitude in
            if count == 0 {
                out = VarintWriter()
                out.bytes.reserveCapacity(NodeBlock.size * 10)
                out.bytes.append(NodeBlock.version)
                first = id
                previous = NodeBlock.Previous()
            }
            while n < data.numberIDs.count && data.numberIDs[n] < id { n += 1 }
            let number = n < data.numberIDs.count && data.numberIDs[n] == id ? Int32(clamping: data.numberValues[n]) : -1
            while use < uses.count && uses[use].node < id { use += 1 }
            nodeWays.removeAll(keepingCapacity: true)
            while use < uses.count && uses[use].node == id {
                nodeWays.append(uses[use].way)
                use += 1
            }
            NodeBlock.append(
                id: id,
                latitude: latitude,
                longitude: longitude,
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
