import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Live areas against a brute-force oracle: a random walk of pins and POIs (created, moved, edited, deleted) through
/// random circles, boxes and polygons; every event the fences stored must be the one the oracle computes with its
/// own geometry (haversine, box bounds, ray casting), in write order, none missing and none extra.
@Suite struct FenceTests {
    struct Oracle {
        enum Shape {
            case circle(lat: Double, lon: Double, radius: Double)
            case box(west: Double, south: Double, east: Double, north: Double)
            case polygon([(lat: Double, lon: Double)])
        }

        let id: String
        let shape: Shape
        let detect: Set<String>
        let kind: String
        let category: String?

        func contains(_ lat: Double, _ lon: Double) -> Bool {
            switch shape {
            case .circle(let clat, let clon, let radius):
                let r = 6_371_008.8
                let dLat = (lat - clat) * .pi / 180
                let dLon = (lon - clon) * .pi / 180
                let a = sin(dLat / 2) * sin(dLat / 2) + cos(clat * .pi / 180) * cos(lat * .pi / 180) * sin(dLon / 2) * sin(dLon / 2)
                return 2 * r * asin(min(1, sqrt(a))) <= radius
            case .box(let west, let south, let east, let north):
                return lat >= south && lat <= north && lon >= west && lon <= east
            case .polygon(let vertices):
                var inside = false
                var j = vertices.count - 1
                for i in 0..<vertices.count {
                    let (yi, xi) = vertices[i]
                    let (yj, xj) = vertices[j]
                    if (yi > lat) != (yj > lat), lon < (xj - xi) * (lat - yi) / (yj - yi) + xi { inside.toggle() }
                    j = i
                }
                return inside
            }
        }

        func watches(kind recordKind: String, category: String?) -> Bool {
            guard kind == "all" || kind == recordKind else { return false }
            guard let wanted = self.category else { return true }
            return category.map { $0 == wanted || $0.hasPrefix(wanted + ".") } ?? false
        }
    }

    static func randomFence(_ i: Int, _ random: inout SplitMix64) -> (Fence, Oracle) {
        let lat = 60.17 + random.uniform(-0.02...0.02)
        let lon = 24.94 + random.uniform(-0.04...0.04)
        let detects: [[Fence.Detect]] = [[.enter, .exit], [.enter], [.exit], [.inside], [.enter, .exit, .inside]]
        let detect = detects[Int(random.next() % UInt64(detects.count))]
        let kinds: [KindFilter] = [.pin, .pin, .all, .poi]
        let kind = kinds[Int(random.next() % 4)]
        let category: String? = kind == .poi && random.next() % 2 == 0 ? "food" : nil
        let area: Fence.Area
        let shape: Oracle.Shape
        switch i % 3 {
        case 0:
            let radius = random.uniform(200...2_500)
            area = .circle(center: Coordinate(uncheckedLatitude: lat, longitude: lon), radius: radius)
            shape = .circle(lat: lat, lon: lon, radius: radius)
        case 1:
            let w = lon - random.uniform(0.005...0.03)
            let e = lon + random.uniform(0.005...0.03)
            let s = lat - random.uniform(0.003...0.015)
            let n = lat + random.uniform(0.003...0.015)
            area = .box(BoundingBox(uncheckedWest: w, south: s, east: e, north: n))
            shape = .box(west: w, south: s, east: e, north: n)
        default:
            // A star-shaped polygon around the centre (simple, possibly concave).
            let count = 3 + Int(random.next() % 6)
            let vertices = (0..<count).map { k -> (lat: Double, lon: Double) in
                let angle = Double(k) / Double(count) * 2 * .pi
                let r = random.uniform(0.004...0.02)
                return (lat + r * sin(angle) * 0.5, lon + r * cos(angle))
            }
            area = .polygon(try! Polygon(vertices: vertices.map { Coordinate(uncheckedLatitude: $0.lat, longitude: $0.lon) }))
            shape = .polygon(vertices)
        }
        let id = "f\(i)"
        let fence = Fence(id: id, area: area, detect: detect, kind: kind, categories: category.map { [$0] } ?? [])
        return (fence, Oracle(id: id, shape: shape, detect: Set(detect.map(\.rawValue)), kind: kind.rawValue, category: category))
    }

    @Test func eventsMatchBruteForceOverARandomWalk() throws {
        let seed = testSeed("fenceWalk")
        var random = SplitMix64(seed: seed)
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        let book = try FenceBook(store: FenceStore(path: nil))
        engine.fences = book
        var oracles: [Oracle] = []
        for i in 0..<40 {
            let (fence, oracle) = Self.randomFence(i, &random)
            try book.put(fence)
            oracles.append(oracle)
        }
        // Records as the oracle sees them: id → (kind, category, lat, lon).
        var live: [String: (kind: String, category: String?, lat: Double, lon: Double)] = [:]
        var expected: [(fence: String, detect: String, id: String)] = []
        func expect(
            _ id: String,
            before: (kind: String, category: String?, lat: Double, lon: Double)?,
            after: (kind: String, category: String?, lat: Double, lon: Double)?
        ) {
            for oracle in oracles.sorted(by: { $0.id < $1.id }) {
                let was = before.map { oracle.watches(kind: $0.kind, category: $0.category) && oracle.contains($0.lat, $0.lon) } ?? false
                let isIn = after.map { oracle.watches(kind: $0.kind, category: $0.category) && oracle.contains($0.lat, $0.lon) } ?? false
                let detect: String? = was ? (isIn ? "inside" : "exit") : (isIn ? "enter" : nil)
                if let detect, oracle.detect.contains(detect) { expected.append((oracle.id, detect, id)) }
            }
        }
        func position() -> (Double, Double) { (60.17 + random.uniform(-0.03...0.03), 24.94 + random.uniform(-0.06...0.06)) }
        var pinIDs: [String] = []
        let categories = ["food.cafe", "food.restaurant", "shop.supermarket"]
        for step in 0..<600 {
            let roll = random.next() % 10
            if roll < 3 || pinIDs.isEmpty {
                let (lat, lon) = position()
                let pin = try engine.createPin(
                    PinInput(uniqueKey: "u\(step)", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: lat, longitude: lon)
                )
                pinIDs.append(pin.id)
                expect(pin.id, before: nil, after: ("pin", nil, lat, lon))
                live[pin.id] = ("pin", nil, lat, lon)
            } else if roll < 7 {
                let id = pinIDs[Int(random.next() % UInt64(pinIDs.count))]
                // A small step most of the time (so records cross edges), sometimes a jump.
                let old = live[id]!
                let (lat, lon) =
                    random.next() % 4 == 0 ? position() : (old.lat + random.uniform(-0.004...0.004), old.lon + random.uniform(-0.008...0.008))
                _ = try engine.updatePin(
                    id: id,
                    PinInput(uniqueKey: "u", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: lat, longitude: lon)
                )
                expect(id, before: old, after: ("pin", nil, lat, lon))
                live[id] = ("pin", nil, lat, lon)
            } else if roll < 8 {
                let index = Int(random.next() % UInt64(pinIDs.count))
                let id = pinIDs.remove(at: index)
                try engine.deletePin(id: id)
                expect(id, before: live[id], after: nil)
                live[id] = nil
            } else {
                let id = "poi\(random.next() % 20)"
                let (lat, lon) = position()
                let category = categories[Int(random.next() % 3)]
                try engine.upsertPOI(POIRecord(id: id, name: "P", category: category, lat: lat, lon: lon))
                expect(id, before: live[id], after: ("poi", category, lat, lon))
                live[id] = ("poi", category, lat, lon)
            }
        }
        var stored: [FenceEvent] = []
        for oracle in oracles { stored += try book.store.events(fence: oracle.id, after: 0, limit: 100_000) }
        stored.sort { $0.sequence < $1.sequence }
        let got = stored.map { event -> (fence: String, detect: String, id: String) in
            let object = try! JSONSerialization.jsonObject(with: Data(event.json.utf8)) as! [String: Any]
            return (event.fence, object["detect"] as! String, (object["object"] as! [String: Any])["id"] as! String)
        }
        #expect(expected.count > 100, "seed \(seed): the walk made too few events (\(expected.count)) to test anything")
        #expect(got.count == expected.count, "seed \(seed): \(got.count) events stored, the oracle expects \(expected.count)")
        for (i, (g, e)) in zip(got, expected).enumerated() where g != e {
            Issue.record("seed \(seed): event \(i) is \(g), the oracle expects \(e)")
            break
        }
    }

    /// Fences and their events are kept in the store's file: a book opened again has them, and sequences go on.
    @Test func fencesAndEventsSurviveAReopen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fences-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.fences").path
        let fence = Fence(
            id: "zone",
            area: .box(BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2)),
            detect: [.enter, .exit],
            webhook: "http://127.0.0.1:9/hook"
        )
        do {
            let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
            engine.fences = try FenceBook(store: FenceStore(path: path))
            try engine.fences!.put(fence)
            _ = try engine.createPin(
                PinInput(uniqueKey: "u", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: 60.15, longitude: 24.95)
            )
        }
        let reopened = try FenceBook(store: FenceStore(path: path))
        #expect(reopened.fences == [fence])
        let events = try reopened.store.events(fence: "zone", after: 0)
        #expect(events.map(\.sequence) == [1])
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        engine.fences = reopened
        let pin = try engine.createPin(
            PinInput(uniqueKey: "u", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: 60.16, longitude: 24.95)
        )
        try engine.deletePin(id: pin.id)
        #expect(try reopened.store.events(fence: "zone", after: 1).map(\.sequence) == [2, 3])
    }

    /// Fences too large for the grid (more than 10 000 cells of 0.01°: tested on every write) report as the small
    /// ones do, beside a small one, and stop reporting once deleted or replaced by a small one elsewhere.
    @Test func fencesTooLargeForTheGridReportLikeTheOthers() throws {
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        let book = try FenceBook(store: FenceStore(path: nil))
        engine.fences = book
        // 3° × 1.5° (45 000 cells); a circle of 150 km around Tampere (well over 10 000 cells); a small box in Helsinki.
        try book.put(Fence(id: "a-box", area: .box(BoundingBox(uncheckedWest: 23, south: 59.5, east: 26, north: 61))))
        try book.put(Fence(id: "b-circle", area: .circle(center: Coordinate(uncheckedLatitude: 61.5, longitude: 23.8), radius: 150_000)))
        try book.put(Fence(id: "c-small", area: .box(BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2))))
        func move(_ id: String?, _ lat: Double, _ lon: Double) throws -> String {
            let input = PinInput(uniqueKey: "u", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: lat, longitude: lon)
            return try id.map { try engine.updatePin(id: $0, input).id } ?? engine.createPin(input).id
        }
        func events(after sequence: Int64) throws -> [String] {
            try ["a-box", "b-circle", "c-small"].flatMap { fence in
                try book.store.events(fence: fence, after: sequence).map { "\($0.sequence) \(fence) \($0.detect)" }
            }.sorted { Int($0.split(separator: " ")[0])! < Int($1.split(separator: " ")[0])! }
        }
        // Helsinki (in the box and the small one; Tampere's circle ends ~160 km north of it), then Tampere (the box
        // ends at 61°: out of it; into the circle), then Stockholm (out of everything).
        let id = try move(nil, 60.15, 24.95)
        _ = try move(id, 61.4978, 23.761)
        _ = try move(id, 59.33, 18.07)
        #expect(
            try events(after: 0) == [
                "1 a-box enter", "2 c-small enter", "3 a-box exit", "4 b-circle enter", "5 c-small exit", "6 b-circle exit",
            ]
        )
        // Deleted, the large box reports nothing more; replaced by a small box in Helsinki, the circle no longer sees
        // Tampere.
        try book.delete(id: "a-box")
        try book.put(Fence(id: "b-circle", area: .box(BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2))))
        _ = try move(id, 61.4978, 23.761)
        _ = try move(id, 60.15, 24.95)
        #expect(try events(after: 6) == ["7 b-circle enter", "8 c-small enter"])
    }

    /// A definition from JSON: each field checked, named in the error.
    @Test func definitionsAreValidatedByField() throws {
        let good = try Fence(
            json: #"{"area":{"type":"polygon","coordinates":[[24.9,60.1],[25.0,60.1],[25.0,60.2]]},"detect":["inside"],"kind":"all"}"#
        )
        #expect(good.detect == [.inside] && good.kind == .all && good.id.hasPrefix("f_"))
        #expect(try Fence(json: good.json) == good)
        let cases: [(String, String)] = [
            (#"[]"#, "body"),
            (#"{"area":{"type":"circle","lat":95,"lon":24,"radius":10}}"#, "area.lat"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":0}}"#, "area.radius"),
            (#"{"area":{"type":"bbox","bbox":[25,60,24]}}"#, "area.bbox"),
            (#"{"area":{"type":"hexagon"}}"#, "area.type"),
            (#"{"area":{"type":"polygon","coordinates":[[24.9,60.1],[25.0,60.1]]}}"#, "area.coordinates"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":10},"detect":["cross"]}"#, "detect"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":10},"kind":"car"}"#, "kind"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":10},"webhook":"ftp://x"}"#, "webhook"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":10},"id":"a b"}"#, "id"),
            (#"{"area":{"type":"circle","lat":60,"lon":24,"radius":10},"colour":"red"}"#, "colour"),
        ]
        for (json, field) in cases {
            #expect(throws: (any Error).self, "\(json)") { try Fence(json: json) }
            do {
                _ = try Fence(json: json)
            } catch {
                guard case .invalid(let parameter, _) = error else {
                    Issue.record("\(json): \(error)")
                    continue
                }
                #expect(parameter == field, "\(json)")
            }
        }
    }
}
