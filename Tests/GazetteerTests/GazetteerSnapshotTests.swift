import BundledData
import Foundation
import GeoCore
import SnapshotFile
import TestSupport
import Testing

@testable import Gazetteer

/// The gazetteer's snapshot: read back, it answers exactly as a gazetteer built from the data files; a snapshot of
/// other files, or a damaged one, is rebuilt.
@Suite struct GazetteerSnapshotTests {
    /// This test's files, removed when it ends.
    let scratch = ScratchDirectory("poi-gazetteer")

    static let queries = [
        "Helsinki", "helsin", "Helsnki", "Springfield, IL", "Paris Texas", "北京市海淀区中关村南大街5号", "朝阳区", "Haidian, Beijing", "shanghai",
        "München", "Sao Paulo", "New York", "kyoto", "Zürich", "san fran", "Mountain View", "1600 Amphitheatre Parkway, Mountain View", "Lagos",
        "广州", "Tianhe", "Reykjavik", "Cape Town", "x", "zz", "Londn",
    ]

    static func answers(_ gazetteer: Gazetteer) throws -> [String] {
        var out: [String] = []
        for text in queries {
            out.append("\(gazetteer.geocode(try GeocodeQuery(text: text, limit: 10)))")
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let p = try Coordinate(latitude: random.uniform(-80...80), longitude: random.uniform(-180...180))
            out.append("\(String(describing: gazetteer.reverse(p)))")
        }
        return out
    }

    @Test func aSnapshotAnswersLikeTheDataFilesAndIsRebuiltWhenTheyChange() throws {
        let directory = scratch.url
        let path = directory.appendingPathComponent("g.snapshot").path
        let data = DataDirectory.resolve()
        let expected = try GazetteerSnapshotTests.answers(BundledGazetteer.shared)

        let first = try Gazetteer.load(directory: data, snapshot: path)
        #expect(first.source.hasPrefix("built (no snapshot at"), "\(first.source)")
        #expect(first.source.hasSuffix("snapshot written"), "\(first.source)")
        let second = try Gazetteer.load(directory: data, snapshot: path)
        #expect(second.source == "read from the snapshot")
        #expect(try GazetteerSnapshotTests.answers(second.gazetteer) == expected)
        // The places are columns read in place from the file: every one reads back whole, and the capitals (stored,
        // not recomputed) are the same.
        let built = BundledGazetteer.shared
        #expect(second.gazetteer.places.count == built.places.count && second.gazetteer.capitals == built.capitals)
        #expect(second.gazetteer.places.ids.isMapped && second.gazetteer.places.alternates.blob.isMapped)
        #expect(second.gazetteer.places.indices.allSatisfy { second.gazetteer.places[$0] == built.places[$0] })

        // Damaged: rebuilt, same answers.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let third = try Gazetteer.load(directory: data, snapshot: path)
        #expect(third.source.contains("checksum"), "\(third.source)")
        #expect(try GazetteerSnapshotTests.answers(third.gazetteer) == expected)

        // Built from other files (a copy of the data directory whose places file is newer): the snapshot just rewritten is
        // refused, named. (`load` then builds as it did above for the damaged file: one rebuild in this test is enough.)
        let copy = directory.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: data) where name.hasSuffix(".gz") || name.hasSuffix(".json") {
            try FileManager.default.copyItem(atPath: data + "/" + name, toPath: copy + "/" + name)
        }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3_600)], ofItemAtPath: copy + "/" + PlaceFile.placesFile)
        let refusal = #expect(throws: SnapshotError.self) { try Gazetteer.readSnapshot(path, key: Gazetteer.sourceKey(directory: copy)) }
        #expect(refusal?.description.contains("other data files") == true, "\(String(describing: refusal))")
    }
}
