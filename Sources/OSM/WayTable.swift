/// Every way's node ids, packed, found by way id (binary search): what multipolygon relations are assembled from and
/// what the mirror for change files keeps, with the tags of the ways that make something. A way's ids are a varint
/// count and the differences from the previous id (zigzag varints): 1–3 bytes an id where plain arrays take 8; its
/// tags, if kept, a count and each key and value as a length and UTF-8 (a dictionary of tag arrays took ~200 bytes a
/// way). See docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale.
public struct WayTable: Sendable {
    public private(set) var ids: [Int64] = []
    private var addresses: [PackedBytes.Address] = []
    private var bytes = PackedBytes()
    private var order: [Int]?
    private var sorted = true
    private var scratch: [UInt8] = []

    public init() {}

    public var count: Int { ids.count }

    public mutating func append(_ id: Int64, _ refs: some Collection<Int64>, tags: [OSMTag]? = nil) {
        if let last = ids.last, id <= last { sorted = false }
        ids.append(id)
        scratch.removeAll(keepingCapacity: true)
        Varint.append(UInt64(refs.count), to: &scratch)
        var previous: Int64 = 0
        for ref in refs {
            Varint.appendSigned(ref &- previous, to: &scratch)
            previous = ref
        }
        Varint.append(UInt64(tags.map { $0.count + 1 } ?? 0), to: &scratch)
        for tag in tags ?? [] {
            Varint.appendText(tag.key, to: &scratch)
            Varint.appendText(tag.value, to: &scratch)
        }
        addresses.append(scratch.withUnsafeBufferPointer { bytes.append($0) })
    }

    /// Ends the appends: ways that came out of id order get an index in id order.
    public mutating func finish() {
        if !sorted && order == nil { order = ids.indices.sorted { ids[$0] < ids[$1] } }
    }

    /// The node ids of the way at `index` (in the order appended).
    public func refs(at index: Int) -> [Int64] {
        bytes.withBytes(at: addresses[index]) { chunk, offset in
            var position = offset
            let n = Int(Varint.read(chunk, &position))
            var out: [Int64] = []
            out.reserveCapacity(n)
            var previous: Int64 = 0
            for _ in 0..<n {
                previous = previous &+ Varint.readSigned(chunk, &position)
                out.append(previous)
            }
            return out
        }
    }

    /// Whether tags are kept with the way at `index`.
    public func hasTags(at index: Int) -> Bool {
        withTags(at: index) { chunk, position in Varint.read(chunk, &position) > 0 }
    }

    /// The tags kept with the way at `index`, if any.
    public func tags(at index: Int) -> [OSMTag]? {
        withTags(at: index) { chunk, position in
            let count = Int(Varint.read(chunk, &position))
            guard count > 0 else { return nil }
            var tags: [OSMTag] = []
            tags.reserveCapacity(count - 1)
            for _ in 1..<count {
                tags.append(OSMTag(key: Varint.readText(chunk, &position), value: Varint.readText(chunk, &position)))
            }
            return tags
        }
    }

    /// `body` with the way's bytes and the position of its tags' count (past its node ids).
    private func withTags<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>, inout Int) -> R) -> R {
        bytes.withBytes(at: addresses[index]) { chunk, offset in
            var position = offset
            let n = Int(Varint.read(chunk, &position))
            for _ in 0..<n { _ = Varint.read(chunk, &position) }
            return body(chunk, &position)
        }
    }

    /// The node ids of way `id`, or nil when the file has no such way. Call `finish()` after the last append.
    public func refs(of id: Int64) -> [Int64]? {
        var (low, high) = (0, ids.count)
        while low < high {
            let mid = (low + high) >> 1
            let value = order.map { ids[$0[mid]] } ?? ids[mid]
            if value < id { low = mid + 1 } else { high = mid }
        }
        guard low < ids.count else { return nil }
        let index = order.map { $0[low] } ?? low
        guard ids[index] == id else { return nil }
        return refs(at: index)
    }
}
