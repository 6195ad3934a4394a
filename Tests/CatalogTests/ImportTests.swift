import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@Suite struct ImportTests {
    let scratch = ScratchDirectory("poi-import")

    func file(_ name: String, _ bytes: [UInt8]) -> String { scratch.write(name, bytes) }

    func file(_ name: String, _ text: String) -> String { scratch.write(name, text) }

    func store() throws -> CatalogStore { try CatalogStore(path: scratch.file("db-\(UUID().uuidString).sqlite")) }

    @Test func jsonlKeepsGoodRowsAndReportsBadOnes() throws {
        var lines = [
            #"{"id":"a","name":"Cafe A","category":"food.cafe","lat":60.1,"lon":24.9}"#,
            #"{"id":"b","name":"broken"#,
            #"{"id":"c","name":"No lat","category":"food.cafe","lon":24.9}"#,
            #"{"id":"d","name":"Bad lat","category":"food.cafe","lat":95,"lon":24.9}"#,
            #"{"id":"e","name":"Cafe E","lat":"60.2","lon":"24.8","cuisine":"coffee"}"#,
            "[1,2,3]",
            "",
            #"{"id":"f","name":"Big","category":"food.cafe","lat":60.1,"lon":24.9,"pad":""# + String(repeating: "x", count: 10 << 20) + #""}"#,
        ]
        lines.append(#"{"id":"g","name":"Cafe G","category":"food.cafe","lat":60.3,"lon":25.0}"#)
        var bytes = Array(lines.joined(separator: "\n").utf8)
        bytes += Array("\n".utf8) + [0x7B, 0xFF, 0xFE, 0x7D] + Array("\n".utf8)  // invalid UTF-8
        let path = file("pois.jsonl", bytes)
        let store = try store()
        let report = try RecordImporter(store: store, options: .init()).importFile(path)
        #expect(report.imported == 4)  // a, e, f (10 MB line), g
        #expect(report.skipped == 5)
        let reasons = report.problems.map(\.description)
        #expect(reasons.contains("pois.jsonl:2: not valid JSON"))
        #expect(reasons.contains("pois.jsonl:3: missing coordinate: lat (or latitude) must be a number"))
        #expect(reasons.contains { $0.hasPrefix("pois.jsonl:4: latitude (y) must be between -90 and 90") })
        #expect(reasons.contains("pois.jsonl:6: not a JSON object"))
        #expect(reasons.contains("pois.jsonl:10: invalid UTF-8"))
        let e = try #require(try store.poi(id: "e"))
        #expect(e.category == "other" && e.tags["cuisine"] == "coffee" && e.lat == 60.2)
    }

    /// A file with more bad rows than a report keeps: every one skipped and counted, the first 1 000 kept with their
    /// lines, in order.
    @Test func aReportKeepsTheFirstProblemsAndCountsThemAll() throws {
        let bad = 1_234
        let lines =
            (1...bad).map { #"{"id":"x\#($0)","name":"No position"}"# } + [#"{"id":"ok","name":"Cafe","category":"food.cafe","lat":60.1,"lon":24.9}"#]
        let report = try RecordImporter(store: try store(), options: .init()).importFile(file("many.jsonl", lines.joined(separator: "\n")))
        #expect(report.imported == 1 && report.skipped == bad)
        #expect(report.problems.count == [ImportProblem].kept && [ImportProblem].kept == 1_000)
        #expect(report.problems.map(\.line) == Array(1...1_000))
    }

    @Test func strictRollsBackTheWholeFile() throws {
        let path = file(
            "strict.jsonl",
            """
            {"id":"a","name":"A","lat":1,"lon":2}
            {"id":"b","name":"B","lat":100,"lon":2}
            """
        )
        let store = try store()
        #expect(throws: ImportError.self) { try RecordImporter(store: store, options: .init(strict: true)).importFile(path) }
        #expect(try store.poiCount() == 0)
    }

    @Test func geojsonAndCSV() throws {
        let geojson = file(
            "pois.geojson",
            """
            {"type": "FeatureCollection", "name": "test", "features": [
              {"type": "Feature", "id": "g1", "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
               "properties": {"name": "Kahvila \\"Kuu\\" {1}", "category": "food.cafe"}},
              {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0,0],[1,1]]}, "properties": {"id": "g2", "name": "line"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.95, 60.18]}, "properties": {"id": "g3", "name": "Tori"}}
            ]}
            """
        )
        let csv = file(
            "pois.csv",
            "id,name,category,latitude,longitude,opening_hours\nc1,\"Cafe, \"\"Quoted\"\"\",food.cafe,60.1,24.9,Mo-Fr\nc2,Two lines \"x\ny\",shop.other,60.2,24.8,\nc3,missing,food.cafe,,24.9,\nc4,short,row\n"
        )
        let store = try store()
        let g = try RecordImporter(store: store, options: .init()).importFile(geojson)
        #expect(g.imported == 2 && g.skipped == 1)
        #expect(g.problems.first?.description == "pois.geojson:4: feature geometry must be a Point with [lon, lat] coordinates")
        #expect(try store.poi(id: "g1")?.name == "Kahvila \"Kuu\" {1}")
        let c = try RecordImporter(store: store, options: .init()).importFile(csv)
        #expect(c.imported == 2 && c.skipped == 2)
        #expect(try store.poi(id: "c1")?.name == "Cafe, \"Quoted\"")
        #expect(try store.poi(id: "c1")?.tags["opening_hours"] == "Mo-Fr")
        #expect(try store.poi(id: "c2")?.name == "Two lines x\ny")
    }

    @Test func gcj02InputIsConvertedAndReimportUpdates() throws {
        let store = try store()
        let wgs = (lat: 39.9836, lon: 116.3164)
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: wgs.lat, longitude: wgs.lon)
        let path = file("gcj.jsonl", #"{"id":"z","name":"Zhongguancun","category":"office","lat":\#(gcj.latitude),"lon":\#(gcj.longitude)}"# + "\n")
        _ = try RecordImporter(store: store, options: .init(crs: .gcj02)).importFile(path)
        let z = try #require(try store.poi(id: "z"))
        #expect(abs(z.lat - wgs.lat) < 1e-9 && abs(z.lon - wgs.lon) < 1e-9)
        let again = file("again.jsonl", #"{"id":"z","name":"Renamed","category":"office","lat":1,"lon":2}"# + "\n")
        _ = try RecordImporter(store: store, options: .init()).importFile(again)
        #expect(try store.poi(id: "z")?.name == "Renamed")
        #expect(try store.poiCount() == 1)
    }

    @Test func emptyFileImportsNothing() throws {
        let report = try RecordImporter(store: try store(), options: .init()).importFile(file("empty.jsonl", ""))
        #expect(report.imported == 0 && report.skipped == 0)
    }
}
