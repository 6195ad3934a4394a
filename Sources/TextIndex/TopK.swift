/// The best `capacity` documents seen so far under a ranking of (bucket ascending, score descending, document
/// ascending), where a document offered more than once keeps its best entry.
///
/// A binary heap with the worst entry at the root (so the admission threshold is read in O(1)); a document met again
/// through another posting list is found and raised in place instead of taking a second slot (which would raise the
/// threshold wrongly and let block skipping drop a true member). A page-sized heap finds it by scanning its entries
/// (a few dozen compares, cheaper than hashing); a large one keeps a position map.
/// - Complexity: `offer` is O(log capacity) (O(capacity) up to `scanLimit`, where that is the cheaper);
///   `sorted()` is O(capacity log capacity).
public struct TopK: Sendable {
    public struct Entry: Sendable, Equatable {
        /// Ranking-rule bucket: smaller is better (see the engine's rank key).
        public var bucket: UInt64
        public var score: Double
        public var doc: UInt32

        public init(bucket: UInt64, score: Double, doc: UInt32) { (self.bucket, self.score, self.doc) = (bucket, score, doc) }

        /// Whether `self` ranks before `other`.
        @inline(__always)
        public func ranks(before other: Entry) -> Bool {
            if bucket != other.bucket { return bucket < other.bucket }
            if score != other.score { return score > other.score }
            return doc < other.doc
        }
    }

    public let capacity: Int
    @usableFromInline var heap: [Entry] = []
    /// Where each document sits in `heap`, kept only above `scanLimit`.
    private var position: [UInt32: Int] = [:]
    private var mapsPositions: Bool { capacity > Self.scanLimit }
    /// Up to this capacity a document is found by scanning the heap.
    public static let scanLimit = 64

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        heap.reserveCapacity(self.capacity)
    }

    public var count: Int { heap.count }
    @inlinable public var isFull: Bool { heap.count >= capacity }
    /// The entry a newcomer must rank before to be admitted once the heap is full.
    @inlinable public var worst: Entry? { heap.first }

    public func contains(_ doc: UInt32) -> Bool { index(of: doc) != nil }

    @inline(__always)
    private func index(of doc: UInt32) -> Int? {
        mapsPositions ? position[doc] : heap.firstIndex { $0.doc == doc }
    }

    /// Whether an entry of this bucket with at most `scoreBound`, for documents numbered `firstDoc` or more, could
    /// still be admitted (for skipping whole blocks: posting lists are read in document order, so once the worst
    /// entry has a smaller number than a block, a tie on score cannot win and the block is skipped).
    /// Inlinable: the keyword scans call it for every posting they read.
    @inlinable @inline(__always)
    public func admits(bucket: UInt64, scoreBound: Double, firstDoc: UInt32 = 0) -> Bool {
        guard isFull, let worst = heap.first else { return true }
        if bucket != worst.bucket { return bucket < worst.bucket }
        return scoreBound > worst.score || (scoreBound == worst.score && firstDoc < worst.doc)
    }

    /// Offers an entry; a document already present keeps the better of its two entries.
    public mutating func offer(_ entry: Entry) {
        // When full, an entry that does not rank before the worst cannot improve any entry either (each ranks at
        // least as well as the worst), so it is refused before the document is looked up.
        if heap.count >= capacity && !entry.ranks(before: heap[0]) { return }
        if let i = index(of: entry.doc) {
            guard entry.ranks(before: heap[i]) else { return }
            heap[i] = entry
            siftDown(i)  // it ranks better now, so it moves away from the root
            return
        }
        if heap.count < capacity {
            heap.append(entry)
            if mapsPositions { position[entry.doc] = heap.count - 1 }
            siftUp(heap.count - 1)
            return
        }
        if mapsPositions {
            position[heap[0].doc] = nil
            position[entry.doc] = 0
        }
        heap[0] = entry
        siftDown(0)
    }

    /// The entries, best first.
    public func sorted() -> [Entry] { heap.sorted { $0.ranks(before: $1) } }

    public var docs: [UInt32] { heap.map(\.doc) }

    // The root is the entry that ranks last: a parent never ranks before its children.
    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[parent].ranks(before: heap[i]) else { return }
            swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let left = 2 * i + 1
            let right = left + 1
            var worst = i
            if left < heap.count && heap[worst].ranks(before: heap[left]) { worst = left }
            if right < heap.count && heap[worst].ranks(before: heap[right]) { worst = right }
            if worst == i { return }
            swapAt(i, worst)
            i = worst
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        if mapsPositions {
            position[heap[a].doc] = a
            position[heap[b].doc] = b
        }
    }
}
