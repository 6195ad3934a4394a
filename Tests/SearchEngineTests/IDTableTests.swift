import GeoCore
import SnapshotFile
import TestSupport
import Testing

@testable import SearchEngine

/// The id → record number table against a Swift dictionary (the oracle), through inserts, removals and growth,
/// with ids chosen to collide often in few slots.
@Suite struct IDTableTests {
    @Test func answersAsADictionaryDoes() {
        var random = testRandom("IDTableTests.answersAsADictionaryDoes")
        var table = IDTable()
        var oracle: [String: UInt32] = [:]
        // The table compares ids against the records: here, an array of the id each number was given.
        var idOf: [String] = []
        func isRecord(_ id: String) -> (UInt32) -> Bool { { Int($0) < idOf.count && idOf[Int($0)] == id } }
        let ids = (0..<3_000).map { i in i % 3 == 0 ? "gen-\(i)" : (i % 3 == 1 ? "osm:node/\(1_000_000_000 + i * 7)" : "咖啡-\(i)-é") }
        for step in 0..<40_000 {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            if random.next() % 3 == 0 {
                #expect(table.remove(id, isRecord: isRecord(id)) == oracle.removeValue(forKey: id), "step \(step): remove \(id)")
            } else if oracle[id] == nil {
                let number = UInt32(idOf.count)
                idOf.append(id)
                table.insert(id, number: number)
                oracle[id] = number
            } else {
                // A present id given a new record (a later duplicate in a bulk load).
                let number = UInt32(idOf.count)
                idOf.append(id)
                table.assign(id, number: number, isRecord: isRecord(id))
                oracle[id] = number
            }
            if step % 4_001 == 0 {
                #expect(table.checkInvariants(), "step \(step)")
                for probe in ids.prefix(500) {
                    #expect(table.number(of: probe, isRecord: isRecord(probe)) == oracle[probe], "step \(step): \(probe)")
                }
            }
        }
        #expect(table.count == oracle.count && table.checkInvariants())
        for id in ids { #expect(table.number(of: id, isRecord: isRecord(id)) == oracle[id], "\(id)") }
        // Every entry out again: the table ends empty and consistent.
        for (id, number) in oracle { #expect(table.remove(id, isRecord: isRecord(id)) == number) }
        #expect(table.count == 0 && table.checkInvariants() && table.slots.allSatisfy { $0 == 0 })
    }

    @Test func theHashIsTheSameInEveryProcess() {
        // A snapshot stores the table as it is, so the hash must never change between processes or releases. The
        // values below were computed by an independent implementation (Python: FNV-1a 64, SplitMix64's finalizer,
        // high 32 bits).
        #expect(IDTable.hash("gen-1") == 0x0DE4_D516)
        #expect(IDTable.hash("") == 0xF52A_15E9)
        #expect(IDTable.hash("咖啡") == 0x37D9_FD18)
    }

    @Test func aRestoredTableChecksItsSizes() {
        #expect(IDTable(slots: FlatArray(repeating: 0, count: 12), count: 0) == nil, "not a power of two")
        #expect(IDTable(slots: FlatArray(repeating: 0, count: 16), count: 12) == nil, "fuller than the table can be")
        #expect(IDTable(slots: FlatArray(), count: 1) == nil)
        #expect(IDTable(slots: FlatArray(repeating: 0, count: 16), count: 0) != nil)
    }
}
