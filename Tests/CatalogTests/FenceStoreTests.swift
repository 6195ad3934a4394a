import Catalog
import Foundation
import GRDB
import GeoCore
import Records
import TestSupport
import Testing

/// The fence store finds a fence's events through blocks of sequence numbers and lists kept in memory
/// (`FenceStore`'s comment). The oracle is every event appended, kept in a list: after random appends, deletes and
/// reopenings, with blocks and seals small enough to happen often, every fence's events after any number are the
/// oracle's, in order.
@Suite struct FenceStoreTests {
    let scratch = ScratchDirectory("poi-fence-store")

    @Test func aFencesEventsAreTheOnesAppendedAcrossBlocksSealsAndReopenings() throws {
        let seed = testSeed("fenceStoreBlocks")
        var random = SplitMix64(seed: seed)
        let path = scratch.file("e.fences")
        let fences = (0..<12).map { "f\($0)" }
        var store = try FenceStore(path: path, blockSize: 5, sealEvery: 37)
        var oracle: [FenceEvent] = []
        func check(_ step: Int) throws {
            for fence in fences {
                let all = oracle.filter { $0.fence == fence }
                for after in [0, all.first?.sequence ?? 0, all.randomElement(using: &random)?.sequence ?? 0, all.last?.sequence ?? 0] {
                    for limit in [1, 3, 1000] {
                        let expected = Array(all.filter { $0.sequence > after }.prefix(limit))
                        let got = try store.events(fence: fence, after: after, limit: limit)
                        #expect(got == expected, "seed \(seed), step \(step): \(fence) after \(after), limit \(limit)")
                    }
                }
            }
        }
        // The walk goes on until it has done enough of each thing, whatever the seed draws: deletes shrink the
        // oracle, so it is the appended events that are counted.
        var (step, appended, reopenings, deletes) = (0, 0, 0, 0)
        while step < 120 || appended < 250 || reopenings < 2 || deletes < 2 {
            defer { step += 1 }
            switch random.next() % 10 {
            case 0:
                // Reopen: the open lists are made again from the events after the seal.
                store = try FenceStore(path: path, blockSize: 5, sealEvery: 37)
                reopenings += 1
            case 1:
                let fence = fences[Int(random.next() % UInt64(fences.count))]
                try store.delete(id: fence)
                oracle.removeAll { $0.fence == fence }
                deletes += 1
            default:
                let count = 1 + Int(random.next() % 9)
                let batch = (0..<count).map { _ in
                    (
                        fence: fences[Int(random.next() % UInt64(fences.count))],
                        detect: random.next() % 2 == 0 ? "enter" : "exit",
                        make: { (sequence: Int64) in #"{"id":\#(sequence)}"# }
                    )
                }
                let stored = try store.append(batch)
                #expect(stored.map(\.fence) == batch.map(\.fence))
                if let last = oracle.last { #expect(stored.first!.sequence > last.sequence) }
                oracle += stored
                appended += stored.count
            }
            try check(step)
        }
    }

    /// A file written before blocks existed (version 1, events found by an index) opens with its events sealed into
    /// blocks, every one still found.
    @Test func aVersionOneFileIsSealedIntoBlocks() throws {
        let path = scratch.file("v1.fences")
        let old = try DatabaseQueue(path: path)
        try old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1: fences, events, deliveries');
                    CREATE TABLE fence (id TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL);
                    CREATE TABLE fence_event (sequence INTEGER PRIMARY KEY AUTOINCREMENT, fence TEXT NOT NULL, detect TEXT NOT NULL,
                        json TEXT NOT NULL);
                    CREATE INDEX fence_event_by_fence ON fence_event (fence, sequence);
                    CREATE TABLE fence_delivery (fence TEXT PRIMARY KEY NOT NULL, delivered INTEGER NOT NULL DEFAULT 0,
                        dead INTEGER NOT NULL DEFAULT 0);
                    """
            )
            for sequence in 1...300 {
                try db.execute(
                    sql: "INSERT INTO fence_event (sequence, fence, detect, json) VALUES (?, ?, 'enter', ?)",
                    arguments: [sequence, "f\(sequence % 7)", "{\"id\":\(sequence)}"]
                )
            }
        }
        try old.close()
        let store = try FenceStore(path: path, blockSize: 4, sealEvery: 1000)
        for fence in 0..<7 {
            let expected = (1...300).filter { $0 % 7 == fence }.map(Int64.init)
            #expect(try store.events(fence: "f\(fence)", after: 0, limit: 1000).map(\.sequence) == expected)
        }
        // And new events follow the old ones in the one sequence.
        let next = try store.append([(fence: "f1", detect: "exit", make: { _ in "{}" })])
        #expect(next.map(\.sequence) == [301])
        #expect(try store.events(fence: "f1", after: 295, limit: 10).map(\.sequence) == [301])
    }
}
