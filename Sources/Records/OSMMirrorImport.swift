import Foundation
import GeoCore
import OSM
import Parallelism

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
    /// Every way's node ids, in file order, with the tags of the ways with output (POIs, houses, streets,
    /// interpolation lines, areas).
    public var ways = WayTable()
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

/// An import's mirror as the blocks and rows the store writes (`CatalogStore.replaceOSMMirror`). The blocks are
/// encoded on a thread of their own (the encoding is most of the mirror's cost at import) and handed over through a
/// bounded queue: the encoder runs ahead of the writer — while the import writes POIs and addresses — by at most
/// `ahead` bytes, so the mirror's blocks are never all in memory at once (at 52 M nodes they are ~400 MB; see
/// docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale). Its blocks are taken once, by
/// `forEachBlock`; `cancel()` stops an encoder whose blocks will not be taken.
public final class EncodedOSMMirror: @unchecked Sendable {
    package struct Block: Sendable {
        package let first: Int64
        package let count: Int
        package let bytes: [UInt8]
    }

    package enum Table: Sendable { case nodes, ways }

    package let relations: [(id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?)]
    package let coastlineWays: [Int64]
    /// Nil: no mirror (an import with `--no-updates`), so change files are refused.
    package let state: OSMMirrorState?

    // The queue, guarded by `condition`: blocks from `head` on, their bytes, and whether the encoder has finished.
    private let condition = NSCondition()
    private var queue: [(Table, Block)] = []
    private var head = 0
    private var queuedBytes = 0
    private var finished = false
    private var cancelled = false
    private let ahead: Int

    private struct Cancelled: Error {}

    /// No mirror: what replaces an earlier import's when an extract is imported without one.
    public static let none = EncodedOSMMirror()

    private init() {
        (relations, coastlineWays, state, ahead, finished) = ([], [], nil, 0, true)
    }

    /// Starts encoding `data` on a thread of its own, at most `ahead` bytes of blocks before they are taken, the
    /// nodes' way lists made `nodesARange` nodes at a time, the node blocks `chunkBlocks` a task on `workers` threads.
    public init(
        _ data: OSMMirrorImport,
        ahead: Int = 64 << 20,
        nodesARange: Int = 8_000_000,
        chunkBlocks: Int = 256,
        workers: Int = ConcurrentRanges.workers
    ) {
        (relations, coastlineWays, state, self.ahead) = (data.relations, data.coastlineWays, data.state, ahead)
        let thread = Thread { [self] in
            try? Self.encode(data, nodesARange: nodesARange, chunkBlocks: chunkBlocks, workers: workers) { table, block in try put(table, block) }
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    private func put(_ table: Table, _ block: Block) throws {
        condition.lock()
        defer { condition.unlock() }
        while queuedBytes >= ahead && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        queue.append((table, block))
        queuedBytes += block.bytes.count
        condition.broadcast()
    }

    /// Every block in order — the nodes', then the ways' — as the encoder makes them. Call once.
    package func forEachBlock(_ body: (Table, Block) throws -> Void) rethrows {
        while true {
            condition.lock()
            while head == queue.count && !finished { condition.wait() }
            guard head < queue.count else {
                condition.unlock()
                return
            }
            let next = queue[head]
            head += 1
            queuedBytes -= next.1.bytes.count
            if head == queue.count || head >= 4_096 {
                queue.removeFirst(head)
                head = 0
            }
            condition.broadcast()
            condition.unlock()
            try body(next.0, next.1)
        }
    }

    /// Stops the encoder (its blocks are not wanted: the import failed before the mirror was written).
    public func cancel() {
        condition.lock()
        cancelled = true
        queue = []
        head = 0
        queuedBytes = 0
        condition.broadcast()
        condition.unlock()
    }

    /// The blocks of `data` in order, each handed to `emit`.
    static func encode(_ data: OSMMirrorImport, nodesARange: Int, chunkBlocks: Int, workers: Int, emit: (Table, Block) throws -> Void) throws {
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
        try nodeBlocks(data, order: order, memberWays: memberWays, nodesARange: nodesARange, chunkBlocks: chunkBlocks, workers: workers) {
            try emit(.nodes, $0)
        }
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
                data.ways.tags(at: i),
                to: &out,
                previousRef: &previousRef
            )
            count += 1
            if count == WayBlock.size {
                try emit(.ways, block(first, count, out))
                count = 0
            }
        }
        if count > 0 { try emit(.ways, block(first, count, out)) }
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
    /// pair, not every node a slot (the untagged ways of a country's nodes have none). The pairs are made for a range
    /// of nodes at a time (`nodesARange`), so that a country's ~12 M of them are never all held.
    ///
    /// Within a range the blocks are encoded on every core, `chunkBlocks` blocks a task, a task per worker at a time,
    /// and handed on in order: one thread encoding them was the import's longest step after the read (2.5 s of a
    /// 10 M-node extract, the writer waiting for it). A block starts at every `NodeBlock.size`-th node however the
    /// work is cut, so the bytes are those one thread makes.
    static func nodeBlocks(
        _ data: OSMMirrorImport,
        order: [Int],
        memberWays: Set<Int64>,
        nodesARange: Int,
        chunkBlocks: Int,
        workers: Int,
        emit: (Block) throws -> Void
    ) throws {
        let wayIDs = data.ways.ids
        let used = order.filter { memberWays.contains(wayIDs[$0]) || data.ways.hasTags(at: $0) }
        let starts = data.nodes.blockStarts()
        let total = data.nodes.count
        let chunk = NodeBlock.size * max(1, min(chunkBlocks, (total + NodeBlock.size - 1) / NodeBlock.size))
        let range = max(1, nodesARange / chunk) * chunk
        var uses: [(node: Int64, way: Int64)] = []
        for rangeStart in stride(from: 0, to: total, by: range) {
            let rangeEnd = min(total, rangeStart + range)
            // The pairs of the range's nodes.
            let (low, high) = (data.nodes.id(at: rangeStart, starts: starts), rangeEnd < total ? data.nodes.id(at: rangeEnd, starts: starts) : .max)
            uses.removeAll(keepingCapacity: true)
            for i in used {
                let refs = data.ways.refs(at: i)
                for (k, ref) in refs.enumerated() where ref >= low && ref < high {
                    // A closed way names its first node again at its end: once.
                    if k == refs.count - 1 && refs.count > 1 && ref == refs[0] { continue }
                    uses.append((ref, wayIDs[i]))
                }
            }
            // Ways in `order` are ascending, so each node's ways stay in way order.
            uses.sort { $0.node < $1.node || ($0.node == $1.node && $0.way < $1.way) }
            let pairs = uses
            for group in stride(from: rangeStart, to: rangeEnd, by: chunk * workers) {
                let end = min(rangeEnd, group + chunk * workers)
                let blocks = ConcurrentRanges.map((end - group + chunk - 1) / chunk, workers: workers) { tasks in
                    tasks.flatMap { task in
                        encodeNodes(data, (group + task * chunk)..<min(end, group + (task + 1) * chunk), starts: starts, uses: pairs)
                    }
                }
                for block in blocks { try emit(block) }
            }
        }
    }

    /// The blocks of the nodes at positions `nodes` of the id order (a multiple of `NodeBlock.size` from the first):
    /// each node with its house number and the ways of `uses` that use it.
    static func encodeNodes(_ data: OSMMirrorImport, _ nodes: Range<Int>, starts: [Int], uses: [(node: Int64, way: Int64)]) -> [Block] {
        var blocks: [Block] = []
        var out = VarintWriter()
        var previous = NodeBlock.Previous()
        var (count, first) = (0, Int64(0))
        // Where the nodes' house numbers and pairs start: found by the first node.
        var (n, use) = (-1, -1)
        var nodeWays: [Int64] = []
        data.nodes.forEachNode(in: nodes, starts: starts) { id, latitude, longitude in
            if use < 0 {
                n = data.numberIDs.lowerBound(of: id)
                var (low, high) = (0, uses.count)
                while low < high {
                    let mid = (low + high) >> 1
                    if uses[mid].node < id { low = mid + 1 } else { high = mid }
                }
                use = low
            }
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
