import API
import BundledData
import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// The packed record store against a plain array of records (the oracle), through random appends, replacements
/// and deletions of POIs and pins with awkward strings.
@Suite struct RecordStoreTests {
    @Test func readsBackWhatWasWritten() {
        var random = testRandom("RecordStoreTests.readsBackWhatWasWritten")
        let alphabet: [Character] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\u{1}", "é", "咖", "😀", ",", ":"]
        func text(_ maximum: Int) -> String {
            String((0..<Int(random.next() % UInt64(maximum + 1))).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
        }
        func maybe(_ value: String) -> String? { random.next() % 3 == 0 ? nil : value }
        func record() -> Hit.Record {
            if random.next() % 5 == 0 {
                return .pin(
                    PinRecord(
                        id: text(8),
                        uniqueKey: text(4),
                        firstName: text(6),
                        lastName: text(6),
                        mapString: text(10),
                        mediaURL: "https://x/" + text(4),
                        lat: random.uniform(-90...90),
                        lon: random.uniform(-180...180),
                        createdAt: "2026-01-01T00:00:00.000Z",
                        updatedAt: "2026-01-01T00:00:00.000Z"
                    )
                )
            }
            var tags: [String: String] = [:]
            for _ in 0..<Int(random.next() % 3) { tags[text(5)] = text(8) }
            return .poi(
                POIRecord(
                    id: text(12),
                    name: text(30),
                    category: ["food.cafe", "shop", "transport.bus_stop"][Int(random.next() % 3)],
                    address: maybe(text(40)),
                    city: maybe(["Helsinki", "北京", text(6)][Int(random.next() % 3)]),
                    country: maybe(["FI", "CN"][Int(random.next() % 2)]),
                    lat: random.uniform(-90...90),
                    lon: random.uniform(-180...180),
                    tags: tags
                )
            )
        }
        var store = RecordStore()
        var oracle: [Hit.Record?] = []
        for _ in 0..<3_000 {
            switch random.next() % 10 {
            case 0..<6:
                let r = record()
                store.append(r)
                oracle.append(r)
            case 6..<8 where !oracle.isEmpty:
                let i = Int(random.next() % UInt64(oracle.count))
                let r = record()
                store.set(i, r)
                oracle[i] = r
            case 8 where !oracle.isEmpty:
                let i = Int(random.next() % UInt64(oracle.count))
                store.set(i, nil)
                oracle[i] = nil
            default:
                store.append(nil)
                oracle.append(nil)
            }
        }
        #expect(store.count == oracle.count)
        // The store keeps no coordinates: a POI lies where its caller's facts say.
        func place(_ i: Int) -> RecordStore.Place {
            guard case .poi(let poi)? = oracle[i] else { return (.nan, .nan) }
            return (poi.lat, poi.lon)
        }
        for i in 0..<oracle.count {
            #expect(same(store.record(i, at: place(i)), oracle[i]), "record \(i)")
            if case .poi(let poi)? = oracle[i] { #expect(store.poiName(i) == poi.name) } else { #expect(store.poiName(i) == nil) }
        }
        // Answers are encoded straight from the packed bytes: byte for byte what encoding the record gives.
        let encoders = [APIEncoder(), APIEncoder(coordsys: .gcj02, format: .geojson)]
        for i in 0..<oracle.count {
            guard let packed = store.packed(i, at: place(i)), case .poi(let poi)? = oracle[i] else { continue }
            for encoder in encoders {
                var fast = JSONWriter()
                var plain = JSONWriter()
                encoder.write(packed, distance: 12.5, score: nil, to: &fast)
                encoder.write(.poi(poi), distance: 12.5, score: nil, to: &plain)
                #expect(fast.buffer == plain.buffer, "record \(i): \(String(decoding: fast.buffer, as: UTF8.self))")
            }
        }
    }

    private func same(_ a: Hit.Record?, _ b: Hit.Record?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (.poi(let x)?, .poi(let y)?): return x == y
        case (.pin(let x)?, .pin(let y)?): return x == y
        default: return false
        }
    }
}
