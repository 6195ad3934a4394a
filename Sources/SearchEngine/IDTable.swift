import GeoCore
import SnapshotFile

/// Record numbers by id: an open-addressing hash table (linear probing, deletion by backward shift) that stores
/// only the numbers and 32 bits of each id's hash, and compares ids against the records themselves.
///
/// A `[String: UInt32]` of a million POIs held ~40 MB of anonymous memory (more with ids past 15 bytes, which
/// Swift allocates separately) and had to be rebuilt — a million hashes — at every start, because Swift's hashing is
/// seeded per process. This table's hash is stable (FNV-1a, then a SplitMix64 finalizer), so the snapshot stores the
/// table as it is and a start maps it (`FlatArray`): 8 bytes per slot, at most 70 % full.
///
/// Invariant (`checkInvariants`): every entry is reachable from its home slot without crossing an empty slot.
struct IDTable: Sendable {
    /// Per slot: 0 when empty, else the id's 32-bit hash (high half) and the record number + 1 (low half).
    private(set) var slots = FlatArray<UInt64>()
    private(set) var count = 0

    static let maxLoad = 0.7

    init() {}

    /// Restores a table written as `slots` and `count`. - Returns: nil when the sizes cannot be a table's.
    init?(slots: FlatArray<UInt64>, count: Int) {
        guard slots.isEmpty ? count == 0 : slots.count.nonzeroBitCount == 1 && count >= 0 && Double(count) <= Double(slots.count) * IDTable.maxLoad
        else { return nil }
        self.slots = slots
        self.count = count
    }

    mutating func reserveCapacity(_ capacity: Int) {
        let needed = IDTable.slotCount(for: capacity)
        if needed > slots.count { rehash(to: needed) }
    }

    /// The record number of `id`; `isRecord(number)` tells whether that record's id is `id` (hashes collide).
    func number(of id: String, isRecord: (UInt32) -> Bool) -> UInt32? {
        find(id, isRecord: isRecord).map { IDTable.number(slots[$0]) }
    }

    /// Adds an id that is not in the table.
    mutating func insert(_ id: String, number: UInt32) {
        precondition(number < UInt32.max, "record number out of range")
        if Double(count + 1) > Double(slots.count) * IDTable.maxLoad { rehash(to: max(16, slots.count * 2)) }
        place(UInt64(IDTable.hash(id)) << 32 | UInt64(number + 1))
        count += 1
    }

    /// Points `id` at `number`, whether or not it is in the table (as a dictionary's assignment does).
    mutating func assign(_ id: String, number: UInt32, isRecord: (UInt32) -> Bool) {
        precondition(number < UInt32.max, "record number out of range")
        if let i = find(id, isRecord: isRecord) {
            slots[i] = slots[i] & 0xFFFF_FFFF_0000_0000 | UInt64(number + 1)
        } else {
            insert(id, number: number)
        }
    }

    /// Numbers the records anew: record `r` below `numbers.count` becomes `numbers[r]`. Hashes, and so slots, stay.
    mutating func renumber(_ numbers: [UInt32]) {
        slots.withUnsafeMutableBufferPointer { table in
            for i in table.indices where table[i] != 0 {
                let number = IDTable.number(table[i])
                guard Int(number) < numbers.count else { continue }
                table[i] = table[i] & 0xFFFF_FFFF_0000_0000 | UInt64(numbers[Int(number)] + 1)
            }
        }
    }

    /// Removes `id`; answers its record number.
    @discardableResult
    mutating func remove(_ id: String, isRecord: (UInt32) -> Bool) -> UInt32? {
        guard let i = find(id, isRecord: isRecord) else { return nil }
        let number = IDTable.number(slots[i])
        removeSlot(i)
        count -= 1
        return number
    }

    /// The slot holding `id`: probes from its home slot to the first empty one, asking `isRecord` only of entries
    /// whose hash matches.
    private func find(_ id: String, isRecord: (UInt32) -> Bool) -> Int? {
        guard !slots.isEmpty else { return nil }
        let hash = IDTable.hash(id)
        let mask = slots.count - 1
        var i = IDTable.home(hash, mask)
        return slots.withUnsafeBufferPointer { table in
            while true {
                let entry = table[i]
                if entry == 0 { return nil }
                if UInt32(truncatingIfNeeded: entry >> 32) == hash && isRecord(IDTable.number(entry)) { return i }
                i = (i + 1) & mask
            }
        }
    }

    @inline(__always)
    private static func number(_ entry: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: entry) &- 1 }

    /// Empties slot `hole`, then moves back each later entry of the run that may fill it (Knuth's algorithm R), so
    /// no entry is cut off from its home slot.
    private mutating func removeSlot(_ hole: Int) {
        let mask = slots.count - 1
        var hole = hole
        var i = hole
        slots.withUnsafeMutableBufferPointer { table in
            while true {
                i = (i + 1) & mask
                let entry = table[i]
                if entry == 0 { break }
                let h = IDTable.home(UInt32(truncatingIfNeeded: entry >> 32), mask)
                // The entry stays if its home lies cyclically in (hole, i].
                let stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i)
                if !stays {
                    table[hole] = entry
                    hole = i
                }
            }
            table[hole] = 0
        }
    }

    private mutating func place(_ entry: UInt64) {
        let mask = slots.count - 1
        var i = IDTable.home(UInt32(truncatingIfNeeded: entry >> 32), mask)
        slots.withUnsafeMutableBufferPointer { table in
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = entry
        }
    }

    private mutating func rehash(to slotCount: Int) {
        let old = slots
        slots = FlatArray(repeating: 0, count: slotCount)
        old.withUnsafeBufferPointer { entries in
            for entry in entries where entry != 0 { place(entry) }
        }
    }

    static func slotCount(for count: Int) -> Int {
        var n = 16
        while Double(count) > Double(n) * maxLoad { n *= 2 }
        return n
    }

    /// The home slot: the hash's high bits (the low bits of the table index would repeat the tag's).
    @inline(__always)
    private static func home(_ hash: UInt32, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(hash) &* 0x9E37_79B9) >> 16) & mask
    }

    /// A hash that is the same in every process: FNV-1a over the UTF-8 bytes, then SplitMix64's finalizer.
    static func hash(_ id: String) -> UInt32 {
        var h = FNV1a.hash(id)
        h = (h ^ (h >> 30)) &* 0xbf58_476d_1ce4_e5b9
        h = (h ^ (h >> 27)) &* 0x94d0_49bb_1331_11eb
        h ^= h >> 31
        return UInt32(truncatingIfNeeded: h >> 32)
    }

    /// Every entry reachable from its home slot; `count` entries in all.
    func checkInvariants() -> Bool {
        guard !slots.isEmpty else { return count == 0 }
        let mask = slots.count - 1
        var found = 0
        for (i, entry) in slots.enumerated() where entry != 0 {
            found += 1
            var j = IDTable.home(UInt32(truncatingIfNeeded: entry >> 32), mask)
            while j != i {
                if slots[j] == 0 { return false }
                j = (j + 1) & mask
            }
        }
        return found == count
    }
}
