import Foundation
import TestSupport
import Testing

@Suite struct ImportAndQueryCommandTests {
    let scratch = ScratchDirectory("poi-cli")

    func write(_ name: String, _ text: String) -> String {
        let path = scratch.file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test func importThenQueryEveryWay() throws {
        let db = scratch.file("t.sqlite")
        let data = write(
            "p.jsonl",
            """
            {"id":"1","name":"Cafe Java","category":"food.cafe","lat":60.1700,"lon":24.9380}
            {"id":"2","name":"Kahvila Kuu","category":"food.cafe","lat":60.1720,"lon":24.9400}
            {"id":"3","name":"Harbour Market","category":"shop.supermarket","lat":60.1670,"lon":24.9530}
            {"id":"4","name":"bad","lat":95,"lon":0}
            """
        )
        let imported = try CLI.run(["import", data, "--db", db])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 3, skipped 1"))
        #expect(imported.stderr.contains("p.jsonl:4:"))
        let nearby = try CLI.run(["nearby", "--lat", "60.17", "--lon", "24.938", "--db", db, "--format", "json", "--limit", "2"])
        #expect(nearby.status == 0, "\(nearby.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(nearby.stdout.utf8)) as! [String: Any]
        let results = object["results"] as! [[String: Any]]
        #expect(results.map { $0["id"] as! String } == ["1", "2"])
        #expect(results[0]["distance"] != nil)
        #expect(object["next"] is String)
        let search = try CLI.run(["search", "coffee", "--db", db, "--format", "json"])
        #expect(search.stdout.contains("\"total\":2"))
        let within = try CLI.run(["within", "--bbox", "24.95,60.16,24.96,60.17", "--db", db])
        #expect(within.status == 0 && within.stdout.contains("Harbour Market"))
        let geojson = try CLI.run(["within", "--polygon", "24.9,60.1;25.0,60.1;25.0,60.2;24.9,60.2", "--db", db, "--format", "geojson"])
        #expect(geojson.stdout.contains("\"FeatureCollection\"") && geojson.stdout.contains("\"coordinates\":[24.938,60.17]"))
        let clusters = try CLI.run(["clusters", "--bbox", "24,60,26,61", "--precision", "4", "--db", db, "--format", "json"])
        #expect(clusters.stdout.contains("\"count\":3"))
        let none = try CLI.run(["nearby", "--lat", "60.5", "--lon", "24.938", "--radius", "1", "--db", db])
        #expect(none.status == 1)
    }

    /// After `poi import` the database file alone holds what was imported: the write-ahead log is empty, and a copy of
    /// the file without it answers as the database does (records, and an OpenStreetMap extract's houses).
    @Test func anImportLeavesTheDatabaseFileWhole() throws {
        let records = write(
            "w.jsonl",
            """
            {"id":"a","name":"Whole File Cafe","category":"food.cafe","lat":60.17,"lon":24.94}
            {"id":"b","name":"Whole File Bakery","category":"food.bakery","lat":60.18,"lon":24.95}
            """
        )
        for (name, file, query) in [
            ("records", records, ["search", "whole file", "--format", "json"]),
            ("extract", Repository.path("data/Helsinki.osm.pbf"), ["geocode", "Mannerheimintie 1, Helsinki", "--format", "json"]),
        ] {
            let db = scratch.file("\(name).sqlite")
            let imported = try CLI.run(["import", file, "--db", db])
            #expect(imported.status == 0, "\(name): \(imported.stderr)")
            let log = (try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0
            #expect(log == 0, "\(name): the write-ahead log holds \(log) bytes after the import")
            let copy = scratch.file("\(name)-copy.sqlite")
            try FileManager.default.copyItem(atPath: db, toPath: copy)
            let original = try CLI.run(query + ["--db", db])
            let copied = try CLI.run(query + ["--db", copy])
            #expect(original.status == 0 && !original.stdout.isEmpty, "\(name): \(original.stderr)")
            #expect(copied.stdout == original.stdout, "\(name): the file copied alone answers \(copied.stdout) \(copied.stderr)")
        }
    }

    /// An acknowledged write survives kill -9: the import's process is killed right after its commits.
    @Test func writesSurviveKill9() throws {
        let db = scratch.file("k.sqlite")
        let data = write("k.jsonl", #"{"id":"durable","name":"Durable","category":"office","lat":1,"lon":2}"# + "\n")
        let killed = try CLI.run(["import", data, "--db", db], environment: ["POI_TEST_KILL_AFTER_COMMIT": "1"])
        #expect(killed.status != 0)  // killed by SIGKILL
        let found = try CLI.run(["search", "durable", "--db", db])
        #expect(found.status == 0 && found.stdout.contains("Durable"))
    }

    @Test(arguments: [
        (["import", "x.jsonl", "--crs", "mars"], "--crs: unknown coordinate system \"mars\""),
        (["import", "x.jsonl", "--format", "xml"], "--format must be jsonl, geojson, csv, osmpbf or osmchange"),
        (["nearby", "--lat", "95", "--lon", "0"], "lat must be a number between -90 and 90"),
        (["nearby", "--lat", "60", "--lon", "24", "--radius=-5"], "radius must be a number of metres"),
        (["nearby", "--lat", "60", "--lon", "24", "--limit", "500"], "limit must be an integer between 1 and 100"),
        (["nearby", "--lat", "60", "--lon", "24", "--kind", "cats"], "kind must be poi, pin or all"),
        (["nearby", "--lat", "60", "--lon", "24", "--coordsys", "mars"], "--coordsys"),
        (["within", "--bbox", "1,2,3"], "bbox must be four numbers"),
        (["within", "--polygon", "0,0;1,1"], "polygon must have at least 3 vertices"),
        (["within"], "give exactly one of --bbox and --polygon"),
        (["clusters", "--bbox", "0,0,1,1", "--precision", "13"], "precision must be an integer between 1 and 12"),
        (["search", " "], "keywords must not be empty"),
    ])
    func badUsage(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments + ["--db", scratch.file("absent.sqlite")].filter { _ in arguments[0] != "import" })
        #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }

    @Test func missingNamedDatabaseIsAFailure() throws {
        let result = try CLI.run(["nearby", "--lat", "60", "--lon", "24", "--db", "/nonexistent/x.sqlite"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("does not exist"))
    }
}
