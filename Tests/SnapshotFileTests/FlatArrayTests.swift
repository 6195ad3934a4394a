import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SnapshotFile

/// `FlatArray`: behaves as `Array` under every mutation (the oracle), keeps value semantics between copies, and
/// serves a snapshot's arrays from the mapping until the first write copies them.
@Suite struct FlatArrayTests {
    /// This test's files, removed when it ends.
    let scratch = ScratchDirectory("flat")

    @Test func randomEditsMatchSwiftArrays() {
        var random = testRandom("randomEditsMatchSwiftArrays")
        var flat = FlatArray<UInt32>()
        var oracle: [UInt32] = []
        var copies: [(FlatArray<UInt32>, [UInt32])] = []
        for step in 0..<20_000 {
            let value = UInt32(truncatingIfNeeded: random.next())
            switch random.next() % 10 {
            case 0, 1, 2:
                flat.append(value)
                oracle.append(value)
            case 3 where !oracle.isEmpty:
                let i = Int(random.next() % UInt64(oracle.count))
                flat[i] = value
                oracle[i] = value
            case 4:
                let i = Int(random.next() % UInt64(oracle.count + 1))
                flat.insert(value, at: i)
                oracle.insert(value, at: i)
            case 5 where !oracle.isEmpty:
                let i = Int(random.next() % UInt64(oracle.count))
                #expect(flat.remove(at: i) == oracle.remove(at: i))
            case 6:
                let a = Int(random.next() % UInt64(oracle.count + 1))
                let b = a + Int(random.next() % UInt64(oracle.count - a + 1))
                let new = (0..<Int(random.next() % 5)).map { UInt32($0) &+ value }
                flat.replaceSubrange(a..<b, with: new)
                oracle.replaceSubrange(a..<b, with: new)
            case 7 where !oracle.isEmpty:
                #expect(flat.removeLast() == oracle.removeLast())
            case 8:
                // A copy taken now must keep its values whatever happens to the original later.
                if copies.count < 20 { copies.append((flat, oracle)) }
            default:
                if random.next() % 50 == 0 {
                    let keep = random.next() % 2 == 0
                    flat.removeAll(keepingCapacity: keep)
                    oracle.removeAll(keepingCapacity: keep)
                } else {
                    flat.append(contentsOf: [value, value &+ 1])
                    oracle.append(contentsOf: [value, value &+ 1])
                }
            }
            if step % 997 == 0 { #expect(flat.array == oracle, "step \(step)") }
        }
        #expect(flat.array == oracle)
        #expect(flat.count == oracle.count && flat.last == oracle.last && flat.first == oracle.first)
        for (copy, expected) in copies { #expect(copy.array == expected) }
    }

    @Test func copiesAreIndependent() {
        var a: FlatArray<Int32> = [1, 2, 3]
        let b = a
        a[0] = 9
        a.append(4)
        #expect(a.array == [9, 2, 3, 4])
        #expect(b.array == [1, 2, 3])
        // Shrinking an array whose buffer is shared copies all of it first (the copy once held only the new count).
        var d = FlatArray<Int32>((0..<1_000).map { Int32($0) })
        let e = d
        d.removeSubrange(10..<990)
        #expect(d.array == (0..<10).map { Int32($0) } + (990..<1_000).map { Int32($0) } && e.count == 1_000 && e.last == 999)
        var c = b
        c.withUnsafeMutableBufferPointer { $0[1] = 7 }
        #expect(b.array == [1, 2, 3] && c.array == [1, 7, 3])
        #expect(FlatArray<Int32>(repeating: 5, count: 3) == [5, 5, 5])
    }

    /// Arrays read from a snapshot file point into its mapping; the first write copies just that array, and the
    /// mapping outlives the reader, the file's unlinking and a new file renamed over it.
    @Test func snapshotArraysAreServedFromTheMappingUntilWritten() throws {
        let directory = scratch.url
        let path = directory.appendingPathComponent("f.snapshot").path
        let values = (0..<10_000).map { UInt64($0 * 3) }
        let nested: [FlatArray<UInt16>] = [[1, 2, 3], [], [4], FlatArray((0..<300).map { UInt16($0) })]
        let writer = try SnapshotWriter(path: path, formatVersion: 1)
        try writer.write(FlatArray(values))
        try writer.write(nested: nested)
        try writer.write([UInt8](repeating: 7, count: 5))
        try writer.commit()

        var flat: FlatArray<UInt64>
        var lists: [FlatArray<UInt16>]
        var bytes: FlatArray<UInt8>
        do {
            let reader = try SnapshotReader(path: path, formatVersion: 1)
            flat = try reader.readFlat()
            lists = try reader.readNestedFlat()
            bytes = try reader.readFlat()
            #expect(reader.isAtEnd)
            reader.releaseResidentPages()
        }
        #expect(flat.isMapped && lists[0].isMapped && lists[3].isMapped && bytes.isMapped)
        #expect(!lists[1].isMapped, "an empty array holds no mapping")
        #expect(flat.array == values && lists.map(\.array) == nested.map(\.array) && bytes.array == [7, 7, 7, 7, 7])

        // Replace the file (as the next snapshot does) and unlink it: the mapping still reads the old contents.
        let replacement = try SnapshotWriter(path: path, formatVersion: 1)
        try replacement.write(FlatArray([UInt64](repeating: 1, count: 10)))
        try replacement.commit()
        try FileManager.default.removeItem(atPath: path)
        #expect(flat.array == values)

        let before = flat
        flat[5] = 42
        lists[3].append(999)
        #expect(!flat.isMapped && !lists[3].isMapped && lists[0].isMapped)
        #expect(before.isMapped && before[5] == 15, "the copy made before the write still reads the mapping")
        #expect(flat[5] == 42 && flat.count == values.count && lists[3].count == 301 && lists[3].last == 999)
    }
}
