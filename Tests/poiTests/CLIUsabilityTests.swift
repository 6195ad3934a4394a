import Foundation
import TestSupport
import Testing

/// The CLI as a newcomer types it: negative coordinates as written, suggestions for typos, a version.
@Suite struct CLIUsabilityTests {
    let scratch = ScratchDirectory("poi-cli-usability")

    /// A store with a POI in each quadrant of the globe: Mountain View, Rio, Sydney, Helsinki.
    func database() throws -> String {
        let db = scratch.file("world.sqlite")
        let data = scratch.url.appendingPathComponent("world.jsonl")
        try Data(
            """
            {"id":"mv","name":"Castro Street Cafe","category":"food.cafe","lat":37.3894,"lon":-122.0819}
            {"id":"rio","name":"Cafe Lamas","category":"food.cafe","lat":-22.9330,"lon":-43.1780}
            {"id":"syd","name":"Opera Bar","category":"food.bar","lat":-33.8572,"lon":151.2150}
            {"id":"hel","name":"Cafe Regatta","category":"food.cafe","lat":60.1832,"lon":24.9094}
            """.utf8
        ).write(to: data)
        let imported = try CLI.run(["import", data.path, "--db", db])
        try #require(imported.status == 0, "\(imported.stderr)")
        return db
    }

    @Test func negativeCoordinatesAreValuesNotOptions() throws {
        let db = try database()
        let nearby = try CLI.run(["nearby", "--lat", "37.39", "--lon", "-122.08", "--radius", "2000", "--db", db])
        #expect(nearby.status == 0, "\(nearby.stderr)")
        #expect(nearby.stdout.contains("Castro Street Cafe"), "\(nearby.stdout)")
        let south = try CLI.run(["nearby", "--lat", "-22.93", "--lon", "-43.18", "--db", db, "--format", "json"])
        #expect(south.status == 0, "\(south.stderr)")
        #expect(south.stdout.contains("\"id\":\"rio\""), "\(south.stdout)")
        let within = try CLI.run(["within", "--bbox", "-180,-90,0,90", "--db", db, "--format", "json"])
        #expect(within.status == 0, "\(within.stderr)")
        #expect(within.stdout.contains("\"id\":\"mv\"") && within.stdout.contains("\"id\":\"rio\""), "\(within.stdout)")
        #expect(!within.stdout.contains("\"id\":\"syd\""), "\(within.stdout)")
        let polygon = try CLI.run(["within", "--polygon", "-44,-23;-43,-23;-43,-22;-44,-22", "--db", db, "--format", "json"])
        #expect(polygon.status == 0 && polygon.stdout.contains("\"id\":\"rio\""), "\(polygon.stderr)\(polygon.stdout)")
        let search = try CLI.run(["search", "cafe", "--near", "-22.9,-43.2", "--db", db, "--format", "json", "--limit", "1"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stdout.contains("\"id\":\"rio\""), "\(search.stdout)")
        let reverse = try CLI.run(["reverse", "--lat", "-33.857", "--lon", "151.215"])
        #expect(reverse.status == 0, "\(reverse.stderr)")
        let convert = try CLI.run(["convert", "--from", "wgs84", "--to", "EPSG:3857", "--lat", "-33.857", "--lon", "-151.215"])
        #expect(convert.status == 0, "\(convert.stderr)")
        #expect(convert.stdout.contains("-"), "\(convert.stdout)")
    }

    @Test(arguments: [
        (["nearby", "--lat", "60.17", "--lon", "0x10"], "--lon must be a decimal number"),
        (["nearby", "--lat", "nan", "--lon", "24"], "--lat must be a decimal number"),
        (["nearby", "--lat=inf", "--lon", "24"], "--lat must be a decimal number"),
        (["nearby", "--lat", "60", "--lon", "24", "--radius", "-5"], "radius"),
        (["nearby", "--lat", "-91", "--lon", "24"], "lat"),
    ])
    func badNumbersAreUsageErrors(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments + ["--db", scratch.file("none.sqlite")])
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }

    /// A store URL that is not a PostgreSQL URL, or --db beside --store, is bad usage (exit 2) named by its option,
    /// before anything is opened; so is one from POI_STORE.
    @Test(
        arguments: [
            (["nearby", "--lat", "60", "--lon", "24", "--store", "mysql://u@h/db"], [:], "--store: not a postgresql://"),
            (["search", "cafe", "--store", "postgresql://u@h:5432/"], [:], "--store: the URL names no database"),
            (["nearby", "--lat", "60", "--lon", "24"], ["POI_STORE": "postgresql://h/db"], "POI_STORE: the URL names no user"),
            (["nearby", "--lat", "60", "--lon", "24", "--store", "postgresql://u@h/db", "--db", "x.sqlite"], [:], "give --db or --store, not both"),
            (
                ["import", "README.md", "--store", "postgresql://u@h/db?application_name=x"], [:],
                "--store: unsupported URL parameter application_name"
            ),
        ] as [([String], [String: String], String)]
    )
    func badStoreURLsAreUsageErrors(_ arguments: [String], _ environment: [String: String], _ fragment: String) throws {
        let result = try CLI.run(arguments, environment: environment, currentDirectory: URL(fileURLWithPath: #filePath).deletingLastPathComponent())
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }

    @Test func commandTyposGetASuggestion() throws {
        let typo = try CLI.run(["serach", "cafe"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("unknown command 'serach'; did you mean 'search'?"), "\(typo.stderr)")
        let transposed = try CLI.run(["nearyb"])
        #expect(transposed.stderr.contains("did you mean 'nearby'?"), "\(transposed.stderr)")
        let unrelated = try CLI.run(["frobnicate"])
        #expect(unrelated.status == 2)
        #expect(unrelated.stderr.contains("the commands are serve, nearby, search"), "\(unrelated.stderr)")
    }

    @Test func versionIsPrinted() throws {
        let result = try CLI.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(result.stdout)")
    }

    /// From another directory, the default database is the repository's var/poi.sqlite, not a new ./var/.
    @Test func defaultDatabaseIsBesideTheBundledData() throws {
        let result = try CLI.run(["search", "kahvila", "--limit", "1", "--format", "json"], currentDirectory: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"results\":[{"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("var")), "no ./var/ where the command ran")
    }

    /// `poi geocode` and `poi reverse` keep the gazetteer in the snapshot this user's databases share: the first
    /// builds it and writes it there, the next maps it (the file is not written again) and answers alike.
    @Test func theGazetteerIsBuiltOnceAndMappedAfter() throws {
        let cache = scratch.url.appendingPathComponent("cache").path
        let arguments = ["reverse", "--lat", "-33.8568", "--lon", "151.2153", "--format", "json"]
        let first = try CLI.run(arguments, environment: ["POI_CACHE_DIR": cache])
        #expect(first.status == 0, "\(first.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasSuffix(".snapshot") }
        try #require(written.count == 1, "one gazetteer snapshot in \(cache): \(written)")
        let path = cache + "/" + written[0]
        let inode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        let second = try CLI.run(arguments, environment: ["POI_CACHE_DIR": cache])
        #expect(second.status == 0 && second.stdout == first.stdout, "\(second.stdout) \(second.stderr)")
        #expect(
            try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == inode,
            "the snapshot was mapped, not written again"
        )
    }

    @Test func geocodingFallsBackAndSaysWhatItDoesNotKnow() throws {
        let street = try CLI.run(["geocode", "1600 Amphitheatre Parkway, Mountain View, CA", "--limit", "1"])
        #expect(street.status == 0, "\(street.stderr)")
        #expect(
            street.stdout.contains("Mountain View, Santa Clara County, California, United States [+1600 Amphitheatre Parkway]"),
            "\(street.stdout)"
        )
        let sea = try CLI.run(["reverse", "--lat", "0", "--lon", "0"])
        #expect(sea.status == 0, "\(sea.stderr)")
        #expect(sea.stdout.contains("none claimed"), "\(sea.stdout)")
        let opera = try CLI.run(["reverse", "--lat", "-33.8568", "--lon", "151.2153"])
        #expect(opera.stdout.contains("city           Sydney"), "\(opera.stdout)")
        let nothing = try CLI.run(["geocode", "Qqqzzx Xyzzyq"])
        #expect(nothing.status == 1)
        #expect(nothing.stdout.isEmpty, "no empty table before the message: \(nothing.stdout)")
        #expect(nothing.stderr.contains("no place matches"))
    }
}
