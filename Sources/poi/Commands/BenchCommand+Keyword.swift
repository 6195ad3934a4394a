import ArgumentParser
import Bench
import BundledData
import Foundation
import Gazetteer
import GeoCore
import HTTPAPI
import Metrics
import Prometheus
import Records
import SearchEngine
import SpatialIndex
import Startup

/// The options of the keyword benchmarks.
struct KeywordBenchOptions: BenchOptionGroups {
    @OptionGroup var data: BenchDataOptions
    @OptionGroup var load: BenchQueryOptions

    @Option(help: "Load the records from this database (start-up is then timed from SQLite).") var db: String?
    @Option(help: "Keywords, one per line (default: words drawn from the records' names).") var keywordFile: String?
    @Option(help: "Write the queries run, one {\"q\",\"lat\",\"lon\"} per line, for peers to replay.") var dumpQueries: String?
    @Option(help: "Also print the N slowest queries with their times to standard error.") var slowest: Int = 0

    func configure(_ run: inout BenchRun) { (run.db, run.keywordFile, run.dumpQueries, run.slowest) = (db, keywordFile, dumpQueries, slowest) }
}

struct KeywordBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keyword", abstract: "Keyword search, top 20 as GET /v1/search.")
    @OptionGroup var options: KeywordBenchOptions
    @Option(
        help:
            "Query classes, one {\"class\",\"q\",\"origin\",\"lat\",\"lon\"} per line (benchmarks/keyword/make_classes.py); prints one line per class and origin."
    )
    var classes: String?
    @Option(
        help:
            "With --classes: time every query this many times and keep its least time (1 to 100), to compare two builds through a noisy machine."
    )
    var `repeat`: Int = 1

    func validate() throws {
        guard (1...100).contains(`repeat`) else { throw ValidationError("--repeat must be from 1 to 100") }
        guard `repeat` == 1 || classes != nil else { throw ValidationError("--repeat times the queries of --classes; give --classes") }
    }

    func run() throws { try options.run(.keyword) { ($0.classes, $0.repeats) = (classes, `repeat`) } }
}

struct KeywordNearbyBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keyword-nearby", abstract: "The 10 nearest matches within 5 km.")
    @OptionGroup var options: KeywordBenchOptions

    func run() throws { try options.run(.keywordNearby) }
}
