import SnapshotFile
import TextIndex

/// Normalized names of every place and division, stored flat and sorted for exact, prefix and typo lookup.
///
/// Keys are the UTF-8 bytes of `TextNormalizer` output, concatenated in one buffer; `sorted` orders key numbers by
/// their bytes, so an exact name is an equal range and a prefix a contiguous range (binary search, no hash table of
/// ~700 000 strings). Typo lookup scans the keys whose length is within the typo budget, with a bounded edit
/// distance.
struct NameIndex: Sendable {
    enum Kind: UInt8, Sendable {
        /// The entity's own name (or Chinese full name).
        case primary = 0
        /// ASCII spelling or pinyin.
        case transliteration = 1
        /// An alternate or short name.
        case alternate = 2
    }

    private var bytes: [UInt8] = []
    /// `bytes`, frozen by `finish()`. This and the other flat arrays are served from the snapshot's mapping after a
    /// restart (`FlatArray`); the index is never written after `finish()`.
    var storage = FlatArray<UInt8>()
    var offsets: FlatArray<Int32> = [0]
    var targets = FlatArray<Int32>()
    var kinds: [Kind] = []
    var sorted = FlatArray<Int32>()
    /// The first 8 bytes (big-endian, zero-padded) of every `fenceStride`-th key of `sorted`: a binary search reads
    /// this one contiguous array first and then a window of `sorted` a few strides wide, where a search of `sorted`
    /// alone took ~40 scattered reads (key number, offset, bytes) per lookup. Made when the index is (`makeFence`).
    private(set) var fence: [UInt64] = []
    static let fenceStride = 32
    /// Key numbers by key length in bytes (index = length), for typo scans.
    var byLength: [FlatArray<Int32>] = []
    /// For each 1- and 2-byte prefix, the best key numbers by importance, so short autocomplete prefixes are
    /// answered without scanning tens of thousands of keys.
    var shortPrefixTop: [UInt32: [Int32]] = [:]
    /// Per key, the set of byte classes it contains (bit 0–25 a–z, 26 digits, 27 other ASCII; a byte of a multi-byte
    /// character shares a letter's bit, by its value modulo 26, so Cyrillic or Chinese keys are told apart too — a
    /// Latin query and a Chinese key rarely share enough bits to pass): an edit of one byte changes at most two bits,
    /// so keys whose sets differ in more than 2 × edits bits are skipped without computing a distance.
    var letterMasks = FlatArray<UInt32>()

    static func letterMask<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var mask: UInt32 = 0
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): mask |= 1 << UInt32(b - UInt8(ascii: "a"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"): mask |= 1 << 26
            case 0x20: break
            case 0x80...: mask |= 1 << UInt32(b % 26)
            default: mask |= 1 << 27
            }
        }
        return mask
    }

    /// Table key of a 1- or 2-byte prefix.
    static func shortPrefixCode(_ bytes: UnsafeBufferPointer<UInt8>, length: Int) -> UInt32 {
        length == 1 ? 0x1_0000 | UInt32(bytes[0]) : UInt32(bytes[0]) << 8 | UInt32(bytes[1])
    }

    var count: Int { targets.count }

    mutating func add(_ normalized: String, target: Int32, kind: Kind) {
        guard !normalized.isEmpty else { return }
        bytes.append(contentsOf: normalized.utf8)
        offsets.append(Int32(bytes.count))
        targets.append(target)
        kinds.append(kind)
    }

    /// The bytes of key `k`. Valid while the index is alive (the storage is immutable and owned by the index).
    func key(_ k: Int32) -> UnsafeBufferPointer<UInt8> {
        let start = Int(offsets[Int(k)])
        let end = Int(offsets[Int(k) + 1])
        precondition(start >= 0 && start <= end && end <= storage.count, "name key out of its buffer")
        return UnsafeBufferPointer(start: storage.baseAddress.map { $0 + start }, count: end - start)
    }

    func keyString(_ k: Int32) -> String { String(decoding: key(k), as: UTF8.self) }

    /// Sorts the keys and builds the length buckets and short-prefix tables. `importance` ranks targets.
    mutating func finish(importance: (Int32) -> Double) {
        storage = FlatArray(bytes)
        bytes = []
        let n = targets.count
        var order: [(prefix: UInt64, key: Int32)] = (0..<n).map { k in
            var prefix: UInt64 = 0
            let start = Int(offsets[k])
            let end = Int(offsets[k + 1])
            for i in 0..<8 { prefix = prefix << 8 | UInt64(start + i < end ? storage[start + i] : 0) }
            return (prefix, Int32(k))
        }
        order.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return compare(a.key, b.key) < 0
        }
        sorted = FlatArray(order.map(\.key))
        makeFence()
        var buckets: [[Int32]] = []
        for k in 0..<n {
            let length = Int(offsets[k + 1] - offsets[k])
            if buckets.count <= length { buckets.append(contentsOf: repeatElement([], count: length + 1 - buckets.count)) }
            buckets[length].append(Int32(k))
        }
        byLength = buckets.map { FlatArray($0) }
        letterMasks = FlatArray((0..<n).map { NameIndex.letterMask(key(Int32($0))) })
        // One pass over keys in importance order fills each short prefix's top list.
        let byImportance = (0..<n).map { (importance(targets[$0]), Int32($0)) }.sorted { $0.0 > $1.0 }
        var top: [UInt32: [Int32]] = [:]
        for (_, k) in byImportance {
            let key = self.key(k)
            for length in 1...2 where key.count >= length {
                let code = NameIndex.shortPrefixCode(key, length: length)
                top[code, default: []].appendIfShort(k, limit: 200)
            }
        }
        shortPrefixTop = top
    }

    private func compare(_ a: Int32, _ b: Int32) -> Int {
        let ka = key(a)
        let kb = key(b)
        return NameIndex.compare(ka, kb)
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        for i in 0..<n where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Key numbers whose key equals `query`.
    func exact(_ query: String) -> [Int32] {
        let q = Array(query.utf8)
        return q.withUnsafeBufferPointer { q in
            let range = equalRange(q, prefix: false)
            return Array(sorted[range])
        }
    }

    /// Key numbers starting with `prefix`, at most `limit` of them (the most important when the range is larger).
    func prefixed(_ prefix: String, limit: Int, importance: (Int32) -> Double) -> [Int32] {
        let q = Array(prefix.utf8)
        return q.withUnsafeBufferPointer { q in
            if (1...2).contains(q.count), let top = shortPrefixTop[NameIndex.shortPrefixCode(q, length: q.count)] {
                return Array(top.prefix(limit))
            }
            let range = equalRange(q, prefix: true)
            if range.count <= limit { return Array(sorted[range]) }
            return NameIndex.top(limit, of: sorted[range]) { importance(targets[Int($0)]) }
        }
    }

    /// Key numbers within the typo budget of `query` (by normalized byte length), with their edit distance.
    func typos(_ query: String, maxEdits: Int) -> [(key: Int32, edits: Int)] {
        guard maxEdits > 0 else { return [] }
        let q = Array(query.utf8)
        let queryMask = NameIndex.letterMask(q)
        var found: [(Int32, Int)] = []
        q.withUnsafeBufferPointer { q in
            for length in max(1, q.count - maxEdits)...(q.count + maxEdits) where length < byLength.count {
                for k in byLength[length] {
                    if (letterMasks[Int(k)] ^ queryMask).nonzeroBitCount > 2 * maxEdits { continue }
                    let key = self.key(k)
                    // Cheap filter: a typo rarely hits both the first and the last letter.
                    if key[0] != q[0] && key[key.count - 1] != q[q.count - 1] { continue }
                    if let edits = EditDistance.within(q, key, limit: maxEdits), edits > 0 { found.append((k, edits)) }
                }
            }
        }
        return found
    }

    /// The `limit` elements with the highest score, best first: one pass with a sorted buffer, so a prefix range of
    /// tens of thousands of keys costs a scan rather than a sort.
    static func top(_ limit: Int, of keys: some Sequence<Int32>, score: (Int32) -> Double) -> [Int32] {
        var best: [(Double, Int32)] = []
        best.reserveCapacity(limit + 1)
        for k in keys {
            let s = score(k)
            if best.count == limit, let last = best.last, s <= last.0 { continue }
            var i = best.count
            best.append((s, k))
            while i > 0 && best[i - 1].0 < s {
                best[i] = best[i - 1]
                i -= 1
            }
            best[i] = (s, k)
            if best.count > limit { best.removeLast() }
        }
        return best.map(\.1)
    }

    /// The first 8 bytes of `bytes` as a big-endian number, each missing byte `padding`.
    static func head(_ bytes: UnsafeBufferPointer<UInt8>, padding: UInt8 = 0) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(i < bytes.count ? bytes[i] : padding) }
        return value
    }

    mutating func makeFence() {
        fence = stride(from: 0, to: sorted.count, by: Self.fenceStride).map { NameIndex.head(key(sorted[$0])) }
    }

    /// The positions in `sorted` of the keys equal to `q`, or (`prefix`) starting with it.
    ///
    /// The fence bounds the window first. Keys hold no zero byte, so a key whose head is below `q`'s zero-padded head
    /// sorts before `q` either way; one whose head is above `q`'s head padded with 0xFF (a prefix search: a longer
    /// key that starts with `q` pads nothing) sorts after every match.
    private func equalRange(_ q: UnsafeBufferPointer<UInt8>, prefix: Bool) -> Range<Int> {
        func cmp(_ k: Int32) -> Int {
            let key = self.key(k)
            if prefix && key.count >= q.count {
                return NameIndex.compare(UnsafeBufferPointer(rebasing: key[0..<q.count]), q)
            }
            return NameIndex.compare(key, q)
        }
        let below = NameIndex.head(q)
        let above = prefix ? NameIndex.head(q, padding: 0xFF) : below
        var low = 0
        var high = fence.count
        while low < high {
            let mid = (low + high) / 2
            if fence[mid] < below { low = mid + 1 } else { high = mid }
        }
        let windowStart = low > 0 ? (low - 1) * NameIndex.fenceStride + 1 : 0
        high = fence.count
        while low < high {
            let mid = (low + high) / 2
            if fence[mid] <= above { low = mid + 1 } else { high = mid }
        }
        let windowEnd = min(sorted.count, low * NameIndex.fenceStride)
        low = windowStart
        high = windowEnd
        while low < high {
            let mid = (low + high) / 2
            if cmp(sorted[mid]) < 0 { low = mid + 1 } else { high = mid }
        }
        let start = low
        high = windowEnd
        while low < high {
            let mid = (low + high) / 2
            if cmp(sorted[mid]) <= 0 { low = mid + 1 } else { high = mid }
        }
        return start..<low
    }
}

extension Array where Element == Int32 {
    mutating func appendIfShort(_ value: Int32, limit: Int) {
        if count < limit { append(value) }
    }
}
