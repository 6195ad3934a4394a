/// Node locations for assembling ways, packed: blocks of up to 64 nodes in id order, each block's first id in an
/// array (found by binary search), its nodes as varints — the first node's latitude and longitude in 1e-7° (OSM's
/// own precision), then per node the gap to the previous id less one and the coordinates' differences (zigzag).
///
/// An extract's nodes are numbered mostly one after another and lie near the previous one, so a node takes 4–8 bytes
/// (16 as plain arrays; 5.0 on the country-shaped synthetic extract) plus 0.3–0.5 for the block's first id, place and
/// count. A lookup decodes from its block's start, or goes on from the previous lookup's `Cursor`: a way's nodes are
/// mostly numbered one after another, so most lookups of a way decode one node. See docs/ARCHITECTURE.md, "Country
/// scale".
///
/// PBF files written by osmium, osmconvert and Osmosis are sorted by type then id, so appending keeps the blocks
/// sorted; an unsorted file is detected and sorted once, in `finish()` (which then holds every node unpacked too).
public struct NodeLocationStore: Sendable {
    public static let blockSize = 64

    /// Nodes packed in blocks, in the order appended: what a block of a file makes on its own thread, then appended to
    /// the store in file order by `append(_:)` (a copy of its bytes).
    public struct Run: Sendable {
        fileprivate var bytes: [UInt8] = []
        fileprivate var firstIDs: [Int64] = []
        /// Where each block starts in `bytes`.
        fileprivate var starts: [Int] = []
        fileprivate var counts: [UInt8] = []
        fileprivate var last: (id: Int64, latitude: Int32, longitude: Int32) = (0, 0, 0)
        fileprivate var sorted = true
        public private(set) var count = 0

        public init() {}

        public mutating func reserve(_ nodes: Int) {
            bytes.reserveCapacity(nodes * 6)
            firstIDs.reserveCapacity(nodes / NodeLocationStore.blockSize + 1)
            starts.reserveCapacity(nodes / NodeLocationStore.blockSize + 1)
            counts.reserveCapacity(nodes / NodeLocationStore.blockSize + 1)
        }

        /// Appends a node, its coordinates in `NodeLocationStore.fixed` units.
        public mutating func append(id: Int64, latitude: Int32, longitude: Int32) {
            let ascending = count == 0 || id > last.id
            if !ascending { sorted = false }
            if let n = counts.last, n < NodeLocationStore.blockSize, ascending {
                Varint.append(UInt64(bitPattern: id &- last.id &- 1), to: &bytes)
                Varint.appendSigned(Int64(latitude) - Int64(last.latitude), to: &bytes)
                Varint.appendSigned(Int64(longitude) - Int64(last.longitude), to: &bytes)
                counts[counts.count - 1] = n + 1
            } else {
                // A new block (an id not above the previous one starts one, so each block's ids ascend).
                firstIDs.append(id)
                starts.append(bytes.count)
                counts.append(1)
                Varint.appendSigned(Int64(latitude), to: &bytes)
                Varint.appendSigned(Int64(longitude), to: &bytes)
            }
            last = (id, latitude, longitude)
            count += 1
        }
    }

    /// Where a lookup stands: a node of a block, decoded, and where the next one's bytes start in its chunk.
    public struct Cursor: Sendable {
        fileprivate var block = -1
        fileprivate var index = 0
        fileprivate var position = 0
        fileprivate var id: Int64 = 0
        fileprivate var latitude: Int32 = 0
        fileprivate var longitude: Int32 = 0

        public init() {}
    }

    private var bytes = PackedBytes()
    private var firstIDs: [Int64] = []
    private var addresses: [PackedBytes.Address] = []
    private var counts: [UInt8] = []
    /// Nodes appended one at a time, not yet moved into the blocks.
    private var tail = Run()
    private var lastID: Int64?
    private var sorted = true
    public private(set) var count = 0

    public init() {}

    /// Bytes a node takes, on average (rounded up): its share of the blocks and of their ids, places and counts.
    public var bytesPerNode: Int {
        guard count > 0 else { return 0 }
        let index = firstIDs.capacity * 8 + addresses.capacity * 8 + counts.capacity
        return (bytes.capacity + tail.bytes.capacity + index + count - 1) / count
    }

    public mutating func append(id: Int64, latitude: Double, longitude: Double) {
        tail.append(id: id, latitude: Self.fixed(latitude), longitude: Self.fixed(longitude))
        if tail.count >= 64 * Self.blockSize { flushTail() }
    }

    /// Appends nodes gathered elsewhere (a block's, on another thread), in the order they were appended there.
    public mutating func append(_ run: Run) {
        flushTail()
        guard run.count > 0 else { return }
        if !run.sorted { sorted = false }
        if let lastID, run.firstIDs[0] <= lastID { sorted = false }
        run.bytes.withUnsafeBufferPointer { all in
            for k in run.starts.indices {
                let end = k + 1 < run.starts.count ? run.starts[k + 1] : all.count
                addresses.append(bytes.append(UnsafeBufferPointer(rebasing: all[run.starts[k]..<end])))
            }
        }
        firstIDs += run.firstIDs
        counts += run.counts
        lastID = run.last.id
        count += run.count
    }

    private mutating func flushTail() {
        guard tail.count > 0 else { return }
        let run = tail
        tail = Run()
        append(run)
    }

    /// Degrees in the store's units of 1e-7° (OSM's own precision).
    @inline(__always) public static func fixed(_ degrees: Double) -> Int32 { Int32((degrees * 1e7).rounded()) }

    /// Ends the appends: sorts the store by id when they came out of order (the last of equal ids wins).
    public mutating func finish() {
        flushTail()
        guard !sorted else { return }
        var ids: [Int64] = []
        var coordinates: [Int32] = []
        ids.reserveCapacity(count)
        coordinates.reserveCapacity(2 * count)
        forEachNode { id, latitude, longitude in
            ids.append(id)
            coordinates.append(latitude)
            coordinates.append(longitude)
        }
        let order = ids.indices.sorted { ids[$0] < ids[$1] || (ids[$0] == ids[$1] && $0 < $1) }
        var run = Run()
        run.reserve(ids.count)
        for (k, i) in order.enumerated() where k + 1 == order.count || ids[order[k + 1]] != ids[i] {
            run.append(id: ids[i], latitude: coordinates[2 * i], longitude: coordinates[2 * i + 1])
        }
        self = NodeLocationStore()
        append(run)
    }

    /// Every node in id order, its coordinates in `fixed` units. Call `finish()` after the last append.
    public func forEachNode(_ body: (Int64, Int32, Int32) throws -> Void) rethrows {
        precondition(tail.count == 0, "NodeLocationStore.finish() must be called before reading every node")
        for b in firstIDs.indices {
            var cursor = start(of: b)
            try body(cursor.id, cursor.latitude, cursor.longitude)
            try bytes.withBytes(at: addresses[b]) { chunk, _ in
                while cursor.index + 1 < Int(counts[b]) {
                    Self.next(&cursor, chunk)
                    try body(cursor.id, cursor.latitude, cursor.longitude)
                }
            }
        }
    }

    /// The position (in id order) of each block's first node: what `forEachNode(in:starts:_:)` finds a range by.
    public func blockStarts() -> [Int] {
        var starts: [Int] = []
        starts.reserveCapacity(counts.count)
        var total = 0
        for n in counts {
            starts.append(total)
            total += Int(n)
        }
        return starts
    }

    /// The nodes at positions `range` of the id order, as `forEachNode` gives them; `starts` is `blockStarts()`.
    public func forEachNode(in range: Range<Int>, starts: [Int], _ body: (Int64, Int32, Int32) throws -> Void) rethrows {
        precondition(tail.count == 0, "NodeLocationStore.finish() must be called before reading every node")
        guard !range.isEmpty else { return }
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "nodes \(range) of \(count)")
        // The last block starting at or before the range.
        var (low, high) = (0, starts.count)
        while low < high {
            let mid = (low + high) >> 1
            if starts[mid] <= range.lowerBound { low = mid + 1 } else { high = mid }
        }
        var b = low - 1
        var left = range.count
        var skip = range.lowerBound - starts[b]
        while left > 0 {
            var cursor = start(of: b)
            let n = Int(counts[b])
            try bytes.withBytes(at: addresses[b]) { chunk, _ in
                while true {
                    if skip > 0 {
                        skip -= 1
                    } else {
                        try body(cursor.id, cursor.latitude, cursor.longitude)
                        left -= 1
                        if left == 0 { return }
                    }
                    guard cursor.index + 1 < n else { return }
                    Self.next(&cursor, chunk)
                }
            }
            b += 1
        }
    }

    /// The id of the node at `position` of the id order; `starts` is `blockStarts()`.
    public func id(at position: Int, starts: [Int]) -> Int64 {
        var id: Int64 = 0
        forEachNode(in: position..<(position + 1), starts: starts) { found, _, _ in id = found }
        return id
    }

    /// The location of node `id`, or nil when the file has no such node. Call `finish()` after the last append.
    /// - Complexity: O(log n).
    public func location(of id: Int64) -> (latitude: Double, longitude: Double)? {
        var cursor = Cursor()
        return location(of: id, cursor: &cursor)
    }

    /// The same, going on from `cursor` (where the previous lookup stopped, or a new one) when `id` lies ahead of it
    /// in the same block, and leaving it at the node found (or where the search stopped).
    public func location(of id: Int64, cursor: inout Cursor) -> (latitude: Double, longitude: Double)? {
        precondition(sorted && tail.count == 0, "NodeLocationStore.finish() must be called before lookups")
        if !(cursor.block >= 0 && id >= cursor.id && (cursor.block + 1 == firstIDs.count || id < firstIDs[cursor.block + 1])) {
            // The last block whose first id is not above `id`.
            var (low, high) = (0, firstIDs.count)
            while low < high {
                let mid = (low + high) >> 1
                if firstIDs[mid] <= id { low = mid + 1 } else { high = mid }
            }
            guard low > 0 else { return nil }
            cursor = start(of: low - 1)
        }
        if cursor.id < id {
            let n = Int(counts[cursor.block])
            bytes.withBytes(at: addresses[cursor.block]) { chunk, _ in
                while cursor.id < id && cursor.index + 1 < n { Self.next(&cursor, chunk) }
            }
        }
        guard cursor.id == id else { return nil }
        return (Double(cursor.latitude) / 1e7, Double(cursor.longitude) / 1e7)
    }

    /// A cursor at the first node of block `b`.
    private func start(of b: Int) -> Cursor {
        bytes.withBytes(at: addresses[b]) { chunk, offset in
            var cursor = Cursor()
            cursor.block = b
            cursor.position = offset
            cursor.id = firstIDs[b]
            cursor.latitude = Int32(truncatingIfNeeded: Varint.readSigned(chunk, &cursor.position))
            cursor.longitude = Int32(truncatingIfNeeded: Varint.readSigned(chunk, &cursor.position))
            return cursor
        }
    }

    /// Moves `cursor` to the next node of its block, decoding it from `chunk`.
    @inline(__always)
    private static func next(_ cursor: inout Cursor, _ chunk: UnsafeBufferPointer<UInt8>) {
        cursor.id = cursor.id &+ Int64(bitPattern: Varint.read(chunk, &cursor.position)) &+ 1
        cursor.latitude = Int32(truncatingIfNeeded: Int64(cursor.latitude) + Varint.readSigned(chunk, &cursor.position))
        cursor.longitude = Int32(truncatingIfNeeded: Int64(cursor.longitude) + Varint.readSigned(chunk, &cursor.position))
        cursor.index += 1
    }
}
