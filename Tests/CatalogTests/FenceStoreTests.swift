import Catalog
import Foundation
import GRDB
import GeoCore
import Records
import TestSupport
import Testing

/// The fence store keeps events in segment files and finds a fence's through lists per segment (`FenceStore`'s and
/// `FenceEventSegments`' comments). The oracle is every event appended, kept in a list: after random appends, deletes,
/// reopenings and trims, with segments small enough to be sealed and dropped often, every fence's events after any
/// number are the oracle's kept ones, in order.
@Suite struct FenceStoreTests {
    let scratch = ScratchDirectory("poi-fence-store")

    @Test(arguments: [false, true])
    func aFencesEventsAreTheOnesAppendedAcrossSegmentsReopeningsAndTrims(inFile: Bool) throws {
        let seed = testSeed("fenceStoreSegments")
        var random = SplitMix64(seed: seed)
        let path = inFile ? scratch.file("e.fences") : nil
        let fences = (0..<12).map { "f\($0)" }
        let retention = FenceEventRetention(seconds: nil, bytes: 6_000)
        func open() throws -> FenceStore { try FenceStore(path: path, segmentBytes: 700, retention: retention) }
        var store = try open()
        var oracle: [FenceEvent] = []
        var next: Int64 = 1
        func check(_ step: Int) throws {
            let kept = try store.keptFrom()
            oracle.removeAll { $0.sequence < kept }
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
            // The retention holds the bytes kept to its bound when a segment is sealed; the newest grows past it by
            // at most a segment (and a batch) until the next.
            let (bytes, segments) = store.eventBytes
            #expect(bytes <= 6_000 + 700 + 9 * 80, "seed \(seed), step \(step): \(bytes) bytes in \(segments) segments")
        }
        // The walk goes on until it has done enough of each thing, whatever the seed draws: deletes and trims shrink
        // the oracle, so it is the appended events that are counted.
        var (step, appended, reopenings, deletes, dropped) = (0, 0, 0, 0, 0)
        while step < 150 || appended < 400 || (inFile && reopenings < 3) || deletes < 2 || dropped < 3 {
            defer { step += 1 }
            switch random.next() % 12 {
            case 0 where inFile:
                // Reopen: sealed segments from their index files, the newest scanned.
                store = try open()
                reopenings += 1
            case 1:
                // A deleted fence's events are not its own again: one made again with the same id starts with none.
                let fence = fences[Int(random.next() % UInt64(fences.count))]
                try store.delete(id: fence)
                oracle.removeAll { $0.fence == fence }
                deletes += 1
            case 2:
                dropped += try store.trim(now: Date().timeIntervalSince1970)
            default:
                let count = 1 + Int(random.next() % 9)
                let batch = (0..<count).map { _ in
                    (
                        fence: fences[Int(random.next() % UInt64(fences.count))],
                        detect: random.next() % 2 == 0 ? "enter" : "exit",
                        make: { (sequence: Int64) in #"{"id":\#(sequence),"name":"Café ☕"}"# }
                    )
                }
                let stored = try store.append(batch)
                #expect(stored.map(\.fence) == batch.map(\.fence))
                #expect(stored.map(\.sequence) == Array(next..<next + Int64(count)), "seed \(seed): numbers follow on")
                next += Int64(count)
                oracle += stored
                appended += stored.count
            }
            try check(step)
        }
    }

    /// Segments older than the retention age are dropped, and an idle store's newest one is sealed so that its
    /// events age out too; the numbers carry on.
    @Test func eventsOlderThanTheRetentionAgeAreDropped() throws {
        let store = try FenceStore(path: scratch.file("age.fences"), segmentBytes: 400, retention: FenceEventRetention(seconds: 3_600, bytes: nil))
        let now = Date().timeIntervalSince1970
        for _ in 0..<60 { _ = try store.append([(fence: "a", detect: "enter", make: { #"{"id":\#($0)}"# })]) }
        #expect(store.eventBytes.segments > 2)
        #expect(try store.trim(now: now + 60) == 0)
        #expect(try store.events(fence: "a", after: 0, limit: 100).count == 60)
        #expect(try store.trim(now: now + 3_700) > 0)
        #expect(try store.events(fence: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.keptFrom() == 61)
        #expect(store.eventBytes.segments == 1)
        #expect(try store.append([(fence: "a", detect: "exit", make: { _ in "{}" })]).map(\.sequence) == [61])
    }

    /// A write the process did not finish (a record cut short at the end of the newest segment) is cut off on
    /// opening; the events before it are all there and the next one takes its number.
    @Test func aTornLastRecordIsCutOffOnOpening() throws {
        let path = scratch.file("torn.fences")
        do {
            let store = try FenceStore(path: path, segmentBytes: 1 << 20, retention: .forever)
            for n in 0..<5 { _ = try store.append([(fence: "f", detect: "enter", make: { #"{"n":\#(n),"id":\#($0)}"# })]) }
        }
        let directory = path + ".events"
        let newest = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".events") }.sorted().last!
        let file = try #require(FileHandle(forWritingAtPath: "\(directory)/\(newest)"))
        let size = try file.seekToEnd()
        // The first 30 bytes of a sixth event: a length that runs past the end.
        var torn: [UInt8] = [200, 0, 0, 0, 1, 2, 3, 4]
        torn += [UInt8](repeating: 7, count: 22)
        try file.write(contentsOf: Data(torn))
        try file.close()
        let store = try FenceStore(path: path, segmentBytes: 1 << 20, retention: .forever)
        #expect(try store.events(fence: "f", after: 0, limit: 10).map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(try FileManager.default.attributesOfItem(atPath: "\(directory)/\(newest)")[.size] as? UInt64 == size)
        #expect(try store.append([(fence: "f", detect: "exit", make: { _ in "{}" })]).map(\.sequence) == [6])
        // A record whose bytes were changed (its JSON's last byte) does not check: it is cut, and its number taken again.
        let changed = try #require(FileHandle(forUpdatingAtPath: "\(directory)/\(newest)"))
        let end = try changed.seekToEnd()
        try changed.seek(toOffset: end - 1)
        try changed.write(contentsOf: Data([UInt8(ascii: "]")]))
        try changed.close()
        let reopened = try FenceStore(path: path, segmentBytes: 1 << 20, retention: .forever)
        #expect(try reopened.events(fence: "f", after: 3, limit: 10).map(\.sequence) == [4, 5])
        #expect(try reopened.append([(fence: "f", detect: "exit", make: { _ in "{}" })]).map(\.sequence) == [6])
    }

    /// A file written when events were rows (version 1, events found by an index) opens with its events moved into
    /// segments, every one still found under its number, the numbers of deleted fences' events skipped.
    @Test func aFileOfEventRowsHasThemMovedIntoSegments() throws {
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
            for sequence in 1...300 where sequence % 11 != 0 {
                try db.execute(
                    sql: "INSERT INTO fence_event (sequence, fence, detect, json) VALUES (?, ?, 'enter', ?)",
                    arguments: [sequence, "f\(sequence % 7)", "{\"id\":\(sequence)}"]
                )
            }
            // The last two went with their fence: their numbers are not handed out again.
            try db.execute(sql: "DELETE FROM fence_event WHERE sequence > 298")
        }
        try old.close()
        let store = try FenceStore(path: path, segmentBytes: 1_000, retention: .forever)
        for fence in 0..<7 {
            let expected = (1...300).filter { $0 % 7 == fence && $0 % 11 != 0 && $0 <= 298 }.map(Int64.init)
            #expect(try store.events(fence: "f\(fence)", after: 0, limit: 1000).map(\.sequence) == expected)
        }
        // And new events follow the old ones in the one sequence.
        let next = try store.append([(fence: "f1", detect: "exit", make: { _ in "{}" })])
        #expect(next.map(\.sequence) == [301])
        #expect(try store.events(fence: "f1", after: 295, limit: 10).map(\.sequence) == [301])
    }
}
