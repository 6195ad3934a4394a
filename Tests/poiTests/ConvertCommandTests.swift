import Foundation
import GeoCore
import Testing

@Suite struct ConvertCommandTests {
    @Test func convertsOnePointFromFlags() throws {
        let result = try CLI.run(["convert", "--from", "wgs84", "--to", "gcj02", "--lat", "39.915", "--lon", "116.404"])
        #expect(result.status == 0)
        #expect(result.stdout == "116.41024449916938,39.91640428150164\n")
    }

    @Test func streamsLinesAtFullPrecision() throws {
        var random = SplitMix64(seed: 7)
        let points = (0..<5_000).map { _ in XY(x: random.uniform(74...134), y: random.uniform(18...53)) }
        let input = points.map { "\($0.x),\($0.y)" }.joined(separator: "\n") + "\n"
        let forward = try CLI.run(["convert", "--from", "wgs84", "--to", "gcj02"], stdin: input)
        #expect(forward.status == 0)
        let back = try CLI.run(["convert", "--from", "gcj02", "--to", "wgs84"], stdin: forward.stdout)
        #expect(back.status == 0)
        let lines = back.stdout.split(separator: "\n")
        #expect(lines.count == points.count)
        for (line, point) in zip(lines, points) {
            let parts = line.split(separator: ",").compactMap { Double($0) }
            #expect(parts.count == 2)
            #expect(abs(parts[0] - point.x) < 1e-9 && abs(parts[1] - point.y) < 1e-9)
        }
    }

    @Test func projectsThroughPROJ() throws {
        let result = try CLI.run(["convert", "--from", "wgs84", "--to", "EPSG:3857"], stdin: "116.4074,39.9042\n\n24.9384,60.1699\n")
        #expect(result.status == 0)
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Double($0) } }
        #expect(rows.count == 2)
        #expect(abs(rows[0][0] - 12958412.492568913847) < 1e-6 && abs(rows[0][1] - 4852030.634814578108) < 1e-6)
        #expect(abs(rows[1][0] - 2776129.989198973402) < 1e-6 && abs(rows[1][1] - 8437661.782002585009) < 1e-6)
    }

    /// Every bad-input path: exit status 2 and one line naming the problem, never a crash.
    @Test(arguments: [
        (["convert", "--from", "mars", "--to", "wgs84", "--lat", "1", "--lon", "2"], "unknown coordinate system \"mars\""),
        (["convert", "--from", "wgs84", "--to", "EPSG:99999", "--lat", "1", "--lon", "2"], "unknown coordinate system \"EPSG:99999\""),
        (["convert", "--from", "wgs84", "--to", "gcj02", "--lat", "91", "--lon", "2"], "latitude (y) must be between -90 and 90"),
        (["convert", "--from", "wgs84", "--to", "gcj02", "--lat", "nan", "--lon", "2"], "--lat must be a decimal number (got \"nan\")"),
        (["convert", "--from", "wgs84", "--to", "gcj02", "--lat", "1"], "--lat and --lon must be given together"),
        (["convert", "--from", "wgs84", "--to", "gcj02", "--lat", "abc", "--lon", "1"], "abc"),
        (["convert", "--to", "gcj02"], "--from"),
        (["convert", "--from", "wgs84", "--to", "gcj02", "--bogus"], "--bogus"),
        (["frobnicate"], "frobnicate"),
    ])
    func badUsageExitsWithTwo(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2, "\(arguments): status \(result.status), stderr \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test(arguments: [
        ("1,2\nfoo\n", "line 2: expected two numbers"),
        ("1,2,3\n", "line 1: expected two numbers"),
        ("1,2\n\n200,1\n", "line 3: longitude (x) must be between -180 and 180"),
        ("nan,1\n", "line 1: expected two numbers \"x,y\", got \"nan,1\""),
        ("0x10,1\n", "line 1: expected two numbers \"x,y\", got \"0x10,1\""),
    ])
    func badStdinLinesExitWithTwo(_ input: String, _ fragment: String) throws {
        let result = try CLI.run(["convert", "--from", "wgs84", "--to", "gcj02"], stdin: input)
        #expect(result.status == 2)
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
    }

    @Test func helpExitsZero() throws {
        let result = try CLI.run(["convert", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("--from"))
    }
}
