import BundledData
import BundledData
import Catalog
import Foundation
import GeoCore
import Gazetteer
import Testing

@Suite struct SyntheticPOIGeneratorTests {
    static let places: [Place] = (try? PlaceFile.loadPlaces(directory: DataDirectory.resolve())) ?? []

    func lines(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SyntheticPOIGenerator(places: Self.places, seed: seed)
        var out: [UInt8] = []
        for _ in 0..<count { generator.next().jsonLine(into: &out) }
        return out
    }

    @Test func sameSeedSameBytesOtherSeedOtherBytes() throws {
        try #require(!Self.places.isEmpty, "bundled places must load")
        #expect(lines(count: 2_000, seed: 42) == lines(count: 2_000, seed: 42))
        #expect(lines(count: 2_000, seed: 42) != lines(count: 2_000, seed: 43))
    }

    @Test func recordsAreValidAndRealistic() throws {
        try #require(!Self.places.isEmpty)
        let categories = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: DataDirectory.resolve() + "/categories.json")))
        let ids = Set(((categories as! [String: Any])["categories"] as! [[String: Any]]).map { $0["id"] as! String })
        var generator = SyntheticPOIGenerator(places: Self.places, seed: 7)
        var chinese = 0
        var seenIDs = Set<String>()
        var categoryCounts: [String: Int] = [:]
        for _ in 0..<20_000 {
            let record = generator.next()
            #expect(seenIDs.insert(record.id).inserted)
            #expect(ids.contains(record.category), "unknown category \(record.category)")
            categoryCounts[record.category, default: 0] += 1
            #expect((-90.0...90.0).contains(record.lat) && (-180.0...180.0).contains(record.lon))
            #expect(!record.name.isEmpty)
            if record.country == "CN" {
                chinese += 1
                #expect(record.name.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) }, "\(record.name)")
            }
            // Decodes as the record shape.
            var line: [UInt8] = []
            record.jsonLine(into: &line)
            let decoded = try JSONDecoder().decode(POIRecord.self, from: Data(line))
            #expect(decoded == record)
        }
        // China holds a large share of the world's urban population in GeoNames.
        #expect(chinese > 1_000)
        #expect(categoryCounts.count > 30)
        #expect(categoryCounts["food.restaurant"]! > categoryCounts["education.university"]!)
    }

    @Test func jsonWriterEscapes() throws {
        var w = JSONWriter()
        w.beginObject()
        w.key("s")
        w.string("quote \" backslash \\ newline \n tab \t bell \u{07} 咖啡")
        w.key("n")
        w.number(1.5)
        w.key("i")
        w.number(3.0)
        w.key("nan")
        w.number(Double.nan)
        w.endObject()
        let object = try JSONSerialization.jsonObject(with: Data(w.buffer)) as! [String: Any]
        #expect(object["s"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{07} 咖啡")
        #expect(object["n"] as? Double == 1.5)
        #expect(object["nan"] is NSNull)
    }
}
