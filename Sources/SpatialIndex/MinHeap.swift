/// A binary min-heap of (key, tag) pairs ordered by key, then tag: the priority queue of the best-first kNN walk.
///
/// Invariant: every element is ≤ its children (Williams, 1964). Kept minimal and non-generic so the hot loop has no
/// indirection; swift-collections' `Heap` is a min-max heap, which does more work per operation than needed here.
/// - Complexity: push and pop O(log n).
struct MinHeap {
    struct Element {
        var key: Double
        var tag: UInt64

        @inline(__always)
        static func < (a: Element, b: Element) -> Bool { a.key < b.key || (a.key == b.key && a.tag < b.tag) }
    }

    private(set) var storage: [Element] = []

    init(capacity: Int = 64) { storage.reserveCapacity(capacity) }

    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }
    var min: Element? { storage.first }

    mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        storage.withUnsafeMutableBufferPointer { heap in
            while child > 0 {
                let parent = (child - 1) / 2
                if !(element < heap[parent]) { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = element
        }
    }

    mutating func pop() -> Element? {
        guard let last = storage.popLast() else { return nil }
        guard !storage.isEmpty else { return last }
        let top = storage[0]
        storage.withUnsafeMutableBufferPointer { heap in
            let count = heap.count
            var parent = 0
            while true {
                var child = 2 * parent + 1
                if child >= count { break }
                if child + 1 < count && heap[child + 1] < heap[child] { child += 1 }
                if !(heap[child] < last) { break }
                heap[parent] = heap[child]
                parent = child
            }
            heap[parent] = last
        }
        return top
    }

    mutating func removeAll() { storage.removeAll(keepingCapacity: true) }
}
