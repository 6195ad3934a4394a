import Foundation
import OSM
import TestSupport
import Testing

/// The PBF reader against pyosmium (libosmium), an independent implementation: every object of the bundled Helsinki
/// extract and of a synthetic extract pyosmium wrote, compared line by line in a canonical text form; then files
/// cut short and damaged, which must fail with the offset of the blob at fault.
@Suite struct PBFReaderTests {
    static let repository = Repository.root
    static let helsinki = repository.appendingPathComponent("data/Helsinki.osm.pbf").path
    let scratch = ScratchDirectory("poi-osm")

    static func python(_ arguments: [String]) throws -> String { try PythonScript.run(arguments) }

    /// The same canonical dump as scripts/osm/dump.py, from our reader.
    static func dump(_ path: String) throws -> String {
        let reader = try PBFReader(path: path)
        var out = ""
        func tags(_ tags: [OSMTag]) -> String { tags.map { "\($0.key)=\($0.value)" }.joined(separator: "\t") }
        while let block = try reader.nextBlock() {
            for n in block.nodes {
                out += "n \(n.id) \(String(format: "%.7f", n.latitude)) \(String(format: "%.7f", n.longitude)) \(tags(n.tags))\n"
            }
            for w in block.ways { out += "w \(w.id) \(w.refs.map(String.init).joined(separator: ",")) \(tags(w.tags))\n" }
            for r in block.relations {
                let members = r.members.map { m in "\(["n", "w", "r"][m.type.rawValue]):\(m.ref):\(m.role)" }.joined(separator: ",")
                out += "r \(r.id) \(members) \(tags(r.tags))\n"
            }
        }
        return out
    }

    static func expectSameLines(_ ours: String, _ theirs: String) {
        let a = ours.split(separator: "\n", omittingEmptySubsequences: false)
        let b = theirs.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(a.count == b.count, "our reader read \(a.count - 1) objects, pyosmium \(b.count - 1)")
        var shown = 0
        for (x, y) in zip(a, b) where x != y {
            Issue.record("ours:      \(x.prefix(300))\npyosmium:  \(y.prefix(300))")
            shown += 1
            if shown == 5 { break }
        }
    }

    @Test func helsinkiMatchesPyosmiumObjectForObject() throws {
        let ours = try Self.dump(Self.helsinki)
        let theirs = try Self.python(["scripts/osm/dump.py", Self.helsinki])
        Self.expectSameLines(ours, theirs)
        // Counted independently with `osmium fileinfo -e`: 24 260 nodes, 5 130 ways, 620 relations.
        var counts = (0, 0, 0)
        let reader = try PBFReader(path: Self.helsinki)
        while let block = try reader.nextBlock() {
            counts.0 += block.nodes.count
            counts.1 += block.ways.count
            counts.2 += block.relations.count
        }
        #expect(counts == (24_260, 5_130, 620))
    }

    @Test func syntheticExtractMatchesPyosmium() throws {
        // A fresh seed each run (SEED=... replays one); the file is pyosmium's, so any seed must read the same.
        let seed = UInt32(truncatingIfNeeded: testSeed("syntheticExtractMatchesPyosmium"))
        let path = scratch.file("synthetic.osm.pbf")
        _ = try Self.python(["scripts/osm/synthetic.py", path, "--nodes", "30000", "--seed", "\(seed)"])
        let ours = try Self.dump(path)
        let theirs = try Self.python(["scripts/osm/dump.py", path])
        Self.expectSameLines(ours, theirs)
        #expect(ours.contains("\nr "), "the synthetic file has relations")
    }

    @Test func headerOfTheBundledFile() throws {
        let reader = try PBFReader(path: Self.helsinki)
        #expect(reader.header.requiredFeatures.contains("OsmSchema-V0.6"))
        #expect(reader.header.requiredFeatures.contains("DenseNodes"))
        let box = try #require(reader.header.bbox)
        #expect(abs(box.west - 24.9351762) < 1e-6 && abs(box.north - 60.1791130) < 1e-6)
    }

    /// Offsets of every blob in the file: (offset, length including its framing).
    static func blobs(_ bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var out: [(Int, Int)] = []
        var i = 0
        while i + 4 <= bytes.count {
            let headerLength = bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            // datasize is field 3 of the BlobHeader: find its varint (the header's last field as writers emit it).
            var j = i + 4
            var dataSize = 0
            let end = i + 4 + headerLength
            while j < end {
                let key = bytes[j]
                j += 1
                if key == 0x18 {
                    var shift = 0
                    var value = 0
                    while true {
                        let b = bytes[j]
                        j += 1
                        value |= Int(b & 0x7F) << shift
                        shift += 7
                        if b < 0x80 { break }
                    }
                    dataSize = value
                } else if key & 7 == 2 {
                    let length = Int(bytes[j])  // type strings are short
                    j += 1 + length
                } else {
                    break
                }
            }
            out.append((i, 4 + headerLength + dataSize))
            i += 4 + headerLength + dataSize
        }
        return out
    }

    @Test func truncatedFilesNameTheBlobTheyEndIn() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.helsinki)))
        let blobs = Self.blobs(bytes)
        #expect(blobs.count >= 3 && blobs.last!.offset + blobs.last!.length == bytes.count, "framing walk covers the file")
        for blob in blobs.dropFirst() {
            for cut in [blob.offset + 2, blob.offset + 10, blob.offset + blob.length / 2, blob.offset + blob.length - 1] {
                let path = scratch.file("cut-\(cut).osm.pbf")
                try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: path))
                #expect(throws: PBFError.truncated(offset: blob.offset)) {
                    let reader = try PBFReader(path: path)
                    while try reader.nextBlock() != nil {}
                }
            }
        }
    }

    /// Decoding on several threads changes nothing: the same blocks in the same order, whatever the number of workers
    /// and however far ahead they may run; the same error at the same blob of a file cut short, with every block before
    /// it handed out first; and a reader stopped early lets its threads go.
    @Test(arguments: [(1, 1), (2, 2), (4, 8)])
    func parallelReadingGivesTheSameBlocks(workers: Int, depth: Int) throws {
        var plain: [OSMBlock] = []
        let reader = try PBFReader(path: Self.helsinki)
        while let block = try reader.nextBlock() { plain.append(block) }
        var parallel: [OSMBlock] = []
        let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: Self.helsinki)[.size] as? Int)
        let reading = ParallelBlockReader(try PBFReader(path: Self.helsinki), workers: workers, depth: depth) { $0 }
        while let block = try reading.next() { parallel.append(block) }
        #expect(parallel == plain)
        #expect(try reading.next() == nil, "the end stays the end")
        #expect(reading.offset == fileSize)

        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.helsinki)))
        let blobs = Self.blobs(bytes)
        let blob = blobs[2]
        let path = scratch.file("cut-parallel-\(workers).osm.pbf")
        try Data(bytes[..<(blob.offset + blob.length / 2)]).write(to: URL(fileURLWithPath: path))
        let cut = ParallelBlockReader(try PBFReader(path: path), workers: workers, depth: depth) { $0 }
        var before = 0
        #expect(throws: PBFError.truncated(offset: blob.offset)) {
            while try cut.next() != nil { before += 1 }
        }
        #expect(before == 1, "the one data block before the cut blob comes out before its error")
        #expect(try cut.next() == nil, "nothing after the error")

        let early = ParallelBlockReader(try PBFReader(path: Self.helsinki), workers: workers, depth: depth) { $0 }
        #expect(try early.next() != nil)
        early.stop()
    }

    /// An error thrown by the transform of one block comes out in that block's place, and `waiting` is told what a
    /// block holds when its transform waits on the caller: here each block of ways waits until the caller has seen
    /// that it is one, as an import's ways wait for the nodes.
    @Test func transformErrorsComeInFileOrderAndWaitersAreAnnounced() throws {
        struct Refused: Error, Equatable { let offset: Int }
        var plain: [OSMBlock] = []
        let reader = try PBFReader(path: Self.helsinki)
        while let block = try reader.nextBlock() { plain.append(block) }
        let refusedAt = try #require(plain.dropFirst().first?.offset)
        let failing = ParallelBlockReader(try PBFReader(path: Self.helsinki), workers: 2) { block in
            if block.offset == refusedAt { throw Refused(offset: block.offset) }
            return block.offset
        }
        #expect(try failing.next() == plain[0].offset)
        #expect(throws: Refused(offset: refusedAt)) { try failing.next() }
        #expect(try failing.next() == nil)

        let released = NSCondition()
        nonisolated(unsafe) var announced = Set<Int>()
        let waiting = ParallelBlockReader(try PBFReader(path: Self.helsinki), workers: 2) { block in
            if !block.ways.isEmpty {
                released.lock()
                while !announced.contains(block.offset) { released.wait() }
                released.unlock()
            }
            return block.offset
        }
        var order: [Int] = []
        while let offset = try waiting.next(waiting: { contents in
            guard contents.ways > 0 else { return }
            released.lock()
            // The next block in file order is the one whose transform waits: every block before it was handed out.
            announced.insert(plain[order.count].offset)
            released.broadcast()
            released.unlock()
        }) {
            order.append(offset)
        }
        #expect(order == plain.map(\.offset))
        #expect(plain.contains { !$0.ways.isEmpty }, "the file has blocks of ways to wait on")
    }

    @Test func corruptBlobsAreReportedWithTheirOffset() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.helsinki)))
        let blob = Self.blobs(bytes)[2]
        var damaged = bytes
        // Overwrite the middle of the compressed data: zlib's checksum or its stream structure must fail.
        for k in 0..<64 { damaged[blob.offset + blob.length / 2 + k] ^= 0x5A }
        let path = scratch.file("corrupt.osm.pbf")
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        let reader = try PBFReader(path: path)
        var thrown: PBFError?
        do { while try reader.nextBlock() != nil {} } catch { thrown = error }
        guard case .corruptBlob(let offset, _) = thrown else {
            Issue.record("expected corruptBlob, got \(String(describing: thrown))")
            return
        }
        #expect(offset == blob.offset)
    }

    /// A hand-made file whose header requires a feature we do not implement.
    @Test func unknownRequiredFeatureIsRefusedByName() throws {
        func field(_ number: UInt8, _ payload: [UInt8]) -> [UInt8] { [number << 3 | 2, UInt8(payload.count)] + payload }
        let headerBlock = field(4, Array("OsmSchema-V0.6".utf8)) + field(4, Array("Sort.Type_then_ID.Mystery".utf8))
        let blob = field(1, headerBlock) + [2 << 3, UInt8(headerBlock.count)]
        let blobHeader = field(1, Array("OSMHeader".utf8)) + [3 << 3, UInt8(blob.count)]
        let file = [0, 0, 0, UInt8(blobHeader.count)] + blobHeader + blob
        let path = scratch.file("feature.osm.pbf")
        try Data(file).write(to: URL(fileURLWithPath: path))
        #expect(throws: PBFError.unsupportedFeature("Sort.Type_then_ID.Mystery")) { try PBFReader(path: path) }
        let notPBF = scratch.file("not.osm.pbf")
        try Data("{\"type\": \"FeatureCollection\"}".utf8).write(to: URL(fileURLWithPath: notPBF))
        #expect(throws: PBFError.self) { try PBFReader(path: notPBF) }
    }

    /// Lookups that start from the previous one's slot find what a lookup from nothing finds: runs of consecutive ids,
    /// jumps back and forth, ids that are missing.
    @Test func nodeLookupsFromAHintFindTheSame() {
        var random = testRandom("nodeLookupsFromAHintFindTheSame")
        var store = NodeLocationStore()
        var id: Int64 = 0
        for _ in 0..<5_000 {
            id += Int64(1 + random.next() % 3)
            store.append(id: id, latitude: Double(id) / 1e4, longitude: 0)
        }
        store.finish()
        var cursor = NodeLocationStore.Cursor()
        var ref: Int64 = 1
        for _ in 0..<20_000 {
            ref = random.next() % 4 == 0 ? Int64(random.next() % UInt64(id + 10)) : ref + 1
            let found = store.location(of: ref, cursor: &cursor)
            #expect(found?.latitude == store.location(of: ref)?.latitude, "node \(ref)")
        }
    }

    /// The packed store against a dictionary: ids with gaps from 1 to 2^40, coordinates anywhere on the globe (the
    /// extremes and large jumps included), appended one at a time and in runs as the import's threads make them;
    /// every node found where it was put, every id between them not found, in order and at random.
    @Test func packedNodesMatchADictionary() {
        var random = testRandom("packedNodesMatchADictionary")
        var truth: [Int64: (Int32, Int32)] = [:]
        var ids: [Int64] = []
        var store = NodeLocationStore()
        var id: Int64 = -5
        var run = NodeLocationStore.Run()
        func coordinate(_ limit: Int32) -> Int32 {
            switch random.next() % 5 {
            case 0: return random.next() % 2 == 0 ? limit : -limit
            case 1: return Int32(truncatingIfNeeded: Int64(random.next() % UInt64(2 * Int64(limit) + 1)) - Int64(limit))
            default: return Int32(truncatingIfNeeded: Int64(random.next() % 2_000) - 1_000) / 3 + (limit / 7)
            }
        }
        for _ in 0..<20_000 {
            let gap = random.next() % 10 == 0 ? Int64(random.next() % (1 << 40)) : Int64(1 + random.next() % 3)
            id += gap
            let (latitude, longitude) = (coordinate(900_000_000), coordinate(1_800_000_000))
            truth[id] = (latitude, longitude)
            ids.append(id)
            if random.next() % 3 == 0 {
                store.append(run)
                run = NodeLocationStore.Run()
                store.append(id: id, latitude: Double(latitude) / 1e7, longitude: Double(longitude) / 1e7)
            } else {
                // A run of the nodes that follow, appended as one (a block of the file).
                run.append(id: id, latitude: latitude, longitude: longitude)
                if random.next() % 200 == 0 {
                    store.append(run)
                    run = NodeLocationStore.Run()
                }
            }
        }
        store.append(run)
        store.finish()
        #expect(store.count == ids.count)
        var seen: [Int64] = []
        store.forEachNode { id, latitude, longitude in
            seen.append(id)
            #expect(truth[id].map { $0 == (latitude, longitude) } == true, "node \(id)")
        }
        #expect(seen == ids)
        // Ranges of positions (blocks here are often part-full: runs end anywhere), against the slice of the whole.
        let starts = store.blockStarts()
        for _ in 0..<300 {
            let a = Int(random.next() % UInt64(ids.count + 1))
            let b = min(ids.count, a + Int(random.next() % 300))
            var part: [Int64] = []
            store.forEachNode(in: a..<b, starts: starts) { id, latitude, longitude in
                part.append(id)
                #expect(truth[id].map { $0 == (latitude, longitude) } == true, "node \(id)")
            }
            #expect(part == Array(ids[a..<b]), "nodes \(a)..<\(b)")
            if a < ids.count { #expect(store.id(at: a, starts: starts) == ids[a]) }
        }
        var cursor = NodeLocationStore.Cursor()
        for k in 0..<60_000 {
            let probe = k % 3 == 0 ? ids[Int(random.next() % UInt64(ids.count))] + Int64(random.next() % 3) - 1 : ids[k % ids.count]
            let found = k % 2 == 0 ? store.location(of: probe, cursor: &cursor) : store.location(of: probe)
            let want = truth[probe].map { (Double($0.0) / 1e7, Double($0.1) / 1e7) }
            #expect(found?.latitude == want?.0 && found?.longitude == want?.1, "node \(probe)")
        }
    }

    /// Way node lists and tags packed, against the lists themselves: found by id, in and out of order, missing ids not
    /// found; tags (none, empty, multi-byte text) given back as kept.
    @Test func packedWaysMatchTheirLists() {
        var random = testRandom("packedWaysMatchTheirLists")
        var truth: [Int64: ([Int64], [OSMTag]?)] = [:]
        var table = WayTable()
        let words = ["", "highway", "name", "Töölönkatu", "北京路", String(repeating: "x", count: 300)]
        for _ in 0..<3_000 {
            let id = Int64(random.next() % 1_000_000)
            let refs = (0..<Int(random.next() % 40)).map { _ in Int64(bitPattern: random.next()) >> Int64(random.next() % 64) }
            let tags: [OSMTag]? =
                random.next() % 3 == 0
                ? nil
                : (0..<Int(random.next() % 4)).map { _ in
                    OSMTag(key: words[Int(random.next() % 6)], value: words[Int(random.next() % 6)])
                }
            if truth[id] == nil {
                truth[id] = (refs, tags)
                table.append(id, refs, tags: tags)
            }
        }
        table.finish()
        for (index, id) in table.ids.enumerated() {
            #expect(table.tags(at: index) == truth[id]?.1, "way \(id)")
            #expect(table.hasTags(at: index) == (truth[id]?.1 != nil), "way \(id)")
        }
        for (id, (refs, _)) in truth { #expect(table.refs(of: id) == refs, "way \(id)") }
        for _ in 0..<1_000 {
            let id = Int64(random.next() % 1_000_000)
            if truth[id] == nil { #expect(table.refs(of: id) == nil, "way \(id)") }
        }
    }

    @Test func nodeLocationStoreSortsUnorderedInput() {
        var store = NodeLocationStore()
        let ids: [Int64] = [50, 3, 999_999_999_999, 7, 3]
        for (k, id) in ids.enumerated() { store.append(id: id, latitude: Double(k), longitude: -Double(k)) }
        store.finish()
        #expect(store.count == 4)
        #expect(store.location(of: 3)?.latitude == 4)  // the later of two equal ids wins
        #expect(store.location(of: 999_999_999_999)?.longitude == -2)
        #expect(store.location(of: 8) == nil)
    }

    @Test func interiorPointOfAnLShapeAndACourtyard() throws {
        // An L: its centroid (in the notch) lies outside; a square with a courtyard: its centroid lies in the hole.
        let l: [AreaGeometry.Point] = [(0, 0), (0, 3), (1, 3), (1, 1), (3, 1), (3, 0)]
        let square: [AreaGeometry.Point] = [(0, 0), (0, 3), (3, 3), (3, 0)]
        let hole: [AreaGeometry.Point] = [(1, 1), (1, 2), (2, 2), (2, 1)]
        for (outer, inner) in [([l], [[AreaGeometry.Point]]()), ([square], [hole])] {
            let p = try #require(AreaGeometry.interiorPoint(outer: outer, inner: inner))
            #expect(Self.inside(p, outer[0]) && !inner.contains { Self.inside(p, $0) }, "\(p) must lie inside the area")
        }
        let rings = AreaGeometry.assembleRings([[1, 2, 3], [5, 6, 1], [3, 4, 5], [7, 8]])
        #expect(rings.rings.count == 1 && rings.rings[0].count == 7 && rings.open == 1)
    }

    static func inside(_ p: AreaGeometry.Point, _ ring: [AreaGeometry.Point]) -> Bool {
        var result = false
        var j = ring.count - 1
        for i in ring.indices {
            let a = ring[i]
            let b = ring[j]
            if (a.latitude > p.latitude) != (b.latitude > p.latitude),
                p.longitude < (b.longitude - a.longitude) * (p.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
            {
                result.toggle()
            }
            j = i
        }
        return result
    }
}
