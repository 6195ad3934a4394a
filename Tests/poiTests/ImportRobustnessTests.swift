import Foundation
import TestSupport
import Testing

/// `poi import` against the malformed files people really have: BOMs, files cut short, unknown CRS codes, several
/// files under --strict, ids given twice, gzip.
@Suite struct ImportRobustnessTests {
    let scratch = ScratchDirectory("poi-import")

    func write(_ name: String, _ bytes: [UInt8]) -> String { scratch.write(name, bytes) }

    func write(_ name: String, _ text: String) -> String { scratch.write(name, text) }

    var db: String { scratch.file("db-\(UUID().uuidString).sqlite") }

    func ids(_ db: String) throws -> [String] {
        let result = try CLI.run(["within", "--bbox=-180,-90,180,90", "--limit", "100", "--format", "json", "--db", db])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        return (object["results"] as! [[String: Any]]).map { $0["id"] as! String }.sorted()
    }

    @Test func csvWithAByteOrderMarkKeepsItsIdColumn() throws {
        let csv = write("bom.csv", [0xEF, 0xBB, 0xBF] + Array("id,name,category,lat,lon\nb1,Kahvila,food.cafe,60.17,24.94\n".utf8))
        let database = db
        let result = try CLI.run(["import", csv, "--db", database])
        #expect(result.status == 0 && result.stdout.contains("imported 1, skipped 0"), "\(result.stdout)\(result.stderr)")
        #expect(try ids(database) == ["b1"])
        let jsonl = write("bom.jsonl", [0xEF, 0xBB, 0xBF] + Array(#"{"id":"j1","name":"A","category":"shop","lat":1,"lon":2}"#.utf8))
        #expect(try CLI.run(["import", jsonl, "--db", database]).stdout.contains("imported 1, skipped 0"))
    }

    static let features = (0..<3).map { i in
        #"{"type":"Feature","id":"g\#(i)","geometry":{"type":"Point","coordinates":[24.9\#(i),60.1\#(i)]},"properties":{"name":"G\#(i)","category":"shop"}}"#
    }

    @Test func truncatedGeoJSONIsReportedAndFailsStrict() throws {
        let whole = #"{"type":"FeatureCollection","features":["# + Self.features.joined(separator: ",\n") + "]}"
        // Missing the closing "]}": every feature is whole, the collection is not.
        let unclosed = write("unclosed.geojson", String(whole.dropLast(2)))
        let lenient = try CLI.run(["import", unclosed, "--db", db])
        #expect(lenient.stderr.contains("unclosed.geojson:3: the file ends before the FeatureCollection is closed"), "\(lenient.stderr)")
        #expect(lenient.stdout.contains("imported 3, skipped 1"), "\(lenient.stdout)")
        let strictDB = db
        let strict = try CLI.run(["import", unclosed, "--strict", "--db", strictDB])
        #expect(strict.status == 1, "\(strict.stdout)\(strict.stderr)")
        #expect(strict.stderr.contains("nothing from unclosed.geojson was imported"))
        // Cut in the middle of the third feature: that feature is reported, not dropped silently.
        let cutText = String(whole.prefix(whole.count - 60))
        let cut = write("cut.geojson", cutText)
        let cutResult = try CLI.run(["import", cut, "--db", db])
        #expect(cutResult.stderr.contains("cut.geojson:3: the file ends inside this feature"), "\(cutResult.stderr)")
        #expect(cutResult.stdout.contains("imported 2, skipped 1"), "\(cutResult.stdout)")
        #expect(try CLI.run(["import", cut, "--strict", "--db", db]).status == 1)
        // The whole file imports cleanly.
        let good = try CLI.run(["import", write("whole.geojson", whole), "--strict", "--db", db])
        #expect(good.status == 0 && good.stdout.contains("imported 3, skipped 0"), "\(good.stderr)")
    }

    @Test func unknownCRSIsAUsageErrorBeforeReading() throws {
        let data = write("crs.jsonl", #"{"id":"c1","name":"A","category":"shop","lat":1,"lon":2}"# + "\n")
        let database = db
        let result = try CLI.run(["import", data, "--crs", "EPSG:99999", "--db", database])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--crs") && result.stderr.contains("EPSG:99999"))
        #expect(!result.stderr.contains("crs.jsonl:1"), "no per-row errors: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database), "nothing was created")
    }

    @Test func strictOverSeveralFilesSaysWhatWasImported() throws {
        let first = write("first.jsonl", #"{"id":"f1","name":"A","category":"shop","lat":1,"lon":2}"# + "\n")
        let bad = write("bad.jsonl", #"{"id":"x1","name":"B","category":"shop","lat":1,"lon":2}"# + "\n" + #"{"id":"x2","lat":95}"# + "\n")
        let last = write("last.jsonl", #"{"id":"l1","name":"C","category":"shop","lat":1,"lon":2}"# + "\n")
        let database = db
        let result = try CLI.run(["import", first, bad, last, "--strict", "--db", database])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.jsonl:2:"), "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "strict import stopped at \(bad); nothing from it was imported; already imported: \(first) (1); not read: \(last)"
            ),
            "\(result.stderr)"
        )
        #expect(!result.stderr.contains("nothing was imported"))
        #expect(try ids(database) == ["f1"])
    }

    @Test func duplicateIdsAreOneRecordTheLaterRowWins() throws {
        let a = write(
            "dupa.jsonl",
            """
            {"id":"d1","name":"First","category":"shop","lat":1,"lon":2}
            {"id":"d2","name":"Other","category":"shop","lat":1,"lon":2}
            {"id":"d1","name":"Second","category":"shop","lat":1,"lon":2}
            """
        )
        let b = write("dupb.jsonl", #"{"id":"d2","name":"Third","category":"shop","lat":1,"lon":2}"# + "\n")
        let database = db
        let result = try CLI.run(["import", a, b, "--db", database])
        #expect(result.status == 0)
        #expect(result.stdout.contains("dupa.jsonl: imported 2, skipped 0, 1 duplicate ids (the later row wins)"), "\(result.stdout)")
        #expect(result.stdout.contains("dupb.jsonl: imported 0, skipped 0, 1 duplicate ids"), "\(result.stdout)")
        #expect(result.stderr.contains("dupa.jsonl:3: duplicate id \"d1\" (also at line 1); this later row wins"), "\(result.stderr)")
        #expect(result.stderr.contains("dupb.jsonl:1: duplicate id \"d2\" (also at dupa.jsonl:2)"), "\(result.stderr)")
        #expect(try ids(database) == ["d1", "d2"])
        let d1 = try CLI.run(["search", "Second", "--db", database, "--format", "json"])
        #expect(d1.stdout.contains("\"d1\""))
        // Re-importing later (another run) is an update, not a duplicate.
        let again = try CLI.run(["import", b, "--db", database])
        #expect(again.stdout.contains("imported 1, skipped 0 in"), "\(again.stdout)")
    }

    @Test func gzipFilesAreReadAndDamagedOnesReported() throws {
        let plain = write("z.jsonl", (0..<50).map { #"{"id":"z\#($0)","name":"Z","category":"shop","lat":1,"lon":2}"# }.joined(separator: "\n"))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-k", plain]
        try gzip.run()
        gzip.waitUntilExit()
        let database = db
        let result = try CLI.run(["import", plain + ".gz", "--db", database])
        #expect(result.status == 0 && result.stdout.contains("imported 50, skipped 0"), "\(result.stdout)\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: plain + ".gz"))
        let damaged = write("damaged.jsonl.gz", Array(bytes.prefix(bytes.count / 2)))
        let broken = try CLI.run(["import", damaged, "--db", db])
        #expect(broken.status == 1 && broken.stderr.contains("damaged.jsonl.gz"), "\(broken.stderr)")
    }
}
