import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import GeoCore
import Records
import TestSupport
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

    /// Random strings (runs of plain text, quotes, backslashes, control characters, non-ASCII) and integers
    /// written by JSONWriter read back identically through Foundation's parser.
    @Test func jsonWriterRoundTripsRandomValues() throws {
        let seed = testSeed("jsonWriterRoundTripsRandomValues")
        var random = SplitMix64(seed: seed)
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "咖", "😀"]
        for _ in 0..<500 {
            let length = Int(random.next() % 40)
            let text = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let integer = Int(bitPattern: UInt(random.next())) >> Int(random.next() % 64)
            var w = JSONWriter()
            w.beginArray()
            w.string(text)
            w.number(integer)
            w.number(Double(integer % 1_000_000_000))
            w.endArray()
            let array = try #require(try JSONSerialization.jsonObject(with: Data(w.buffer)) as? [Any], "SEED=\(seed)")
            #expect(array[0] as? String == text, "SEED=\(seed)")
            #expect((array[1] as? NSNumber)?.int64Value == Int64(integer), "SEED=\(seed)")
            #expect((array[2] as? NSNumber)?.doubleValue == Double(integer % 1_000_000_000), "SEED=\(seed)")
        }
    }
}
