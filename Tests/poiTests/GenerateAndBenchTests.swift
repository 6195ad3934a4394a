import Foundation
import TestSupport
import Testing

@Suite struct GenerateAndBenchTests {
    @Test func generateIsDeterministic() throws {
        let a = try CLI.run(["generate", "--count", "500", "--seed", "9"])
        let b = try CLI.run(["generate", "--count", "500", "--seed", "9"])
        #expect(a.status == 0 && b.status == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.split(separator: "\n").count == 500)
    }

    @Test func generateRejectsBadCount() throws {
        let result = try CLI.run(["generate", "--count", "0"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--count"))
    }

    @Test func generateReportsAMissingDataDirectory() throws {
        let result = try CLI.run(["generate", "--count", "5", "--data-dir", "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot open /nonexistent/places.tsv.gz"))
    }

    @Test(arguments: ["knn", "radius", "bbox"])
    func benchPrintsOneJSONLine(_ op: String) throws {
        let result = try CLI.run(["bench", op, "--n", "2000", "--queries", "200", "--seed", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        for key in ["op", "n", "queries", "k", "build_seconds", "seconds", "qps", "us_per_query"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["op"] as? String == op)
        #expect(object["n"] as? Int == 2000)
    }

    @Test func benchReadsInputAndQueryFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poi-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("records.jsonl")
        let queries = directory.appendingPathComponent("queries.jsonl")
        try "{\"lat\":60.1,\"lon\":24.9}\n{\"lat\":60.2,\"lon\":25.0}\n{\"lat\":-33.8,\"lon\":151.2}\n".write(
            to: input,
            atomically: true,
            encoding: .utf8
        )
        try "{\"lat\":60.15,\"lon\":24.95}\n".write(to: queries, atomically: true, encoding: .utf8)
        let result = try CLI.run(["bench", "knn", "--input", input.path, "--query-file", queries.path, "--k", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"n\":3"))
        #expect(result.stdout.contains("\"mean_results\":2"))
        try "{\"lat\":95,\"lon\":0}\n".write(to: queries, atomically: true, encoding: .utf8)
        let bad = try CLI.run(["bench", "knn", "--input", input.path, "--query-file", queries.path])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("queries.jsonl:1"))
    }

    @Test(arguments: ["keyword", "keyword-nearby"])
    func benchKeywordOps(_ op: String) throws {
        let result = try CLI.run(["bench", op, "--n", "2000", "--queries", "50"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(object["op"] as? String == op)
        #expect(object["p50_us"] != nil && object["p99_us"] != nil)
    }

    /// `--repeat` takes 1 to 100 passes, and only over `--classes`: otherwise a usage error naming it.
    @Test func benchKeywordRepeatIsChecked() throws {
        for arguments in [["--classes", "classes.jsonl", "--repeat", "0"], ["--n", "100", "--repeat", "3"]] {
            let result = try CLI.run(["bench", "keyword"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("--repeat"), "\(arguments): \(result.stderr)")
        }
    }

    /// `bench wire` answers read targets through the server's fast lane on a real database: every target answered
    /// (mean response size in bytes), and a target the lane does not take or a missing --paths is a usage error.
    @Test func benchWireAnswersReadTargets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poi-wire-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = Repository.root
        let db = directory.appendingPathComponent("wire.sqlite").path
        let imported = try CLI.run(["import", root.appendingPathComponent("data/Helsinki.osm.pbf").path, "--db", db])
        try #require(imported.status == 0, "\(imported.stderr)")
        let paths = directory.appendingPathComponent("targets.txt")
        try "/v1/nearby?lat=60.1699&lon=24.9384&radius=1000&limit=10\n/v1/search?q=kahvila&limit=5\n/health\n".write(
            to: paths,
            atomically: true,
            encoding: .utf8
        )
        let result = try CLI.run(["bench", "wire", "--db", db, "--paths", paths.path, "--queries", "30"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(object["op"] as? String == "wire")
        #expect(object["queries"] as? Int == 30)
        #expect((object["mean_results"] as? Double ?? 0) > 100, "mean response size: \(result.stdout)")
        try "/nope\n".write(to: paths, atomically: true, encoding: .utf8)
        let other = try CLI.run(["bench", "wire", "--db", db, "--paths", paths.path])
        #expect(other.status == 2)
        #expect(other.stderr.contains("does not take GET /nope"), "\(other.stderr)")
        let missing = try CLI.run(["bench", "wire", "--db", db])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--paths"), "\(missing.stderr)")
    }
}
