import SnapshotFile

/// A value made of a fixed number of `Double` lanes (a unit vector's x, y, z; a box's six bounds), as `NodeLanes`
/// stores it.
@usableFromInline
protocol LaneRecord: BitwiseCopyable, Equatable {
    /// How many `Double`s make one value.
    static var lanes: Int { get }
    /// The value whose lane `k` is `read(k)`.
    init(reading read: (Int) -> Double)
    /// Lane `k` of the value.
    func lane(_ k: Int) -> Double
}

extension Vec3: LaneRecord {
    @usableFromInline static var lanes: Int { 3 }

    @inlinable
    init(reading read: (Int) -> Double) { self.init(x: read(0), y: read(1), z: read(2)) }

    @inlinable
    func lane(_ k: Int) -> Double {
        switch k {
        case 0: x
        case 1: y
        default: z
        }
    }
}

extension Vec3 {
    /// Slot `slot` of a leaf whose lanes start at `lanes` (see `NodeLanes`).
    @inlinable
    init(lanes: UnsafePointer<Double>, slot: Int) {
        let m = RTree.m
        self.init(x: lanes[slot], y: lanes[m + slot], z: lanes[2 * m + slot])
    }
}

extension Box3 {
    /// Slot `slot` of a branch whose lanes start at `lanes` (see `NodeLanes`).
    @inlinable
    init(lanes: UnsafePointer<Double>, slot: Int) {
        let m = RTree.m
        self.init(
            minX: lanes[slot],
            minY: lanes[m + slot],
            minZ: lanes[2 * m + slot],
            maxX: lanes[3 * m + slot],
            maxY: lanes[4 * m + slot],
            maxZ: lanes[5 * m + slot]
        )
    }
}

extension Box3: LaneRecord {
    @usableFromInline static var lanes: Int { 6 }

    @inlinable
    init(reading read: (Int) -> Double) { self.init(minX: read(0), minY: read(1), minZ: read(2), maxX: read(3), maxY: read(4), maxZ: read(5)) }

    @inlinable
    func lane(_ k: Int) -> Double {
        switch k {
        case 0: minX
        case 1: minY
        case 2: minZ
        case 3: maxX
        case 4: maxY
        default: maxZ
        }
    }
}

/// One value per slot of the R-tree's nodes, stored lane by lane within each node: a node's `m` slots are its `m`
/// first lanes (every x, or every minX), then its `m` second lanes, and so on (a structure of arrays per node).
///
/// The nearest-neighbour walk computes the keys of a whole node at once (`poi_leaf_keys`, `poi_branch_keys`): laid
/// out this way, four or eight slots' lanes are one vector load, and a node is still one contiguous run of cache lines
/// (768 bytes a leaf, 1 536 a branch at m = 32), as the arrays of structures it replaced were (RESULTS.md, issue 59).
/// Everything else reads and writes one slot at a time through the subscript, with the index it used before
/// (`node * m + slot`).
@usableFromInline
struct NodeLanes<Record: LaneRecord>: Sendable {
    /// `Record.lanes * m` doubles per node.
    @usableFromInline var values: FlatArray<Double>

    @inlinable init() { values = FlatArray() }

    @inlinable init(values: FlatArray<Double>) { self.values = values }

    @inlinable static var nodeStride: Int { Record.lanes * RTree.m }

    /// Slots held (`m` per node).
    @inlinable var count: Int { values.count / Record.lanes }

    /// Slots there is room for.
    @inlinable var capacity: Int { values.capacity / Record.lanes }

    @inlinable mutating func reserveCapacity(_ slots: Int) { values.reserveCapacity(slots * Record.lanes) }

    /// Adds a node whose every slot holds `value`.
    @inlinable mutating func appendNode(filledWith value: Record) {
        let m = RTree.m
        values.reserveCapacity(values.count + Self.nodeStride)
        for k in 0..<Record.lanes { values.append(contentsOf: repeatElement(value.lane(k), count: m)) }
    }

    /// The first double of slot `i`'s node, and the slot within it.
    @inlinable static func place(_ i: Int) -> (start: Int, slot: Int) {
        let (node, slot) = i.quotientAndRemainder(dividingBy: RTree.m)
        return (node * nodeStride, slot)
    }

    @inlinable subscript(i: Int) -> Record {
        get {
            let (start, slot) = Self.place(i)
            return values.withUnsafeBufferPointer { v in Record { k in v[start + k * RTree.m + slot] } }
        }
        set {
            let (start, slot) = Self.place(i)
            for k in 0..<Record.lanes { values[start + k * RTree.m + slot] = newValue.lane(k) }
        }
    }

    /// The doubles, node after node.
    @inlinable func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Double>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }
}
