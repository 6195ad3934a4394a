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

/// `poi bench OPERATION`: in-process timings, one JSON line each. Each operation is a subcommand with only its own
/// options; they share their groups (the generated data, the queries) and one runner.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "In-process timings of the indexes; prints one JSON line.",
        discussion: """
            Builds the index from `poi generate` data (--n, --seed) or a JSONL file of records (--input), or loads a \
            database (--db), then runs single-threaded queries generated near the data (or read from --query-file).
            """,
        subcommands: [
            KNNBench.self, RadiusBench.self, BoxBench.self, KeywordBench.self, KeywordNearbyBench.self, GeocodeBench.self,
            AutocompleteBench.self, WireBenchCommand.self, AddressIndexBench.self,
        ]
    )
}

/// The records a benchmark indexes when it generates them (--n, --seed, --data-dir).
struct BenchDataOptions: ParsableArguments {
    @Option(help: "Number of generated records.") var n: Int = 1_000_000
    @OptionGroup var source: GeneratorOptions

    func validate() throws {
        guard n >= 1 else { throw ValidationError("--n must be at least 1") }
    }
}

/// The queries a benchmark runs.
struct BenchQueryOptions: ParsableArguments {
    @Option(help: "Number of queries.") var queries: Int = 100_000
    @Option(help: "Queries from a file: origins as {\"lat\",\"lon\"} per line (geocode: one query text per line).") var queryFile: String?

    func validate() throws {
        guard queries >= 1 else { throw ValidationError("--queries must be at least 1") }
    }
}

/// A benchmark family's options: the shared groups, and what the family adds to each run.
protocol BenchOptionGroups: ParsableArguments {
    var data: BenchDataOptions { get }
    var load: BenchQueryOptions { get }
    /// Puts the family's own options into a run.
    func configure(_ run: inout BenchRun)
}

extension BenchOptionGroups {
    /// Runs `op` with these options and then a subcommand's own (`adjust`); its errors as the CLI's.
    func run(_ op: BenchRun.Operation, _ adjust: (inout BenchRun) -> Void = { _ in }) throws {
        var run = BenchRun(op: op, data: data, load: load)
        configure(&run)
        adjust(&run)
        try run.runCommand()
    }
}

extension BenchRun {
    /// The run a subcommand's option groups describe.
    init(op: Operation, data: BenchDataOptions, load: BenchQueryOptions) {
        self.init(
            op: op,
            n: data.n,
            seed: data.source.seed,
            dataDir: data.source.dataDir,
            chinaShare: data.source.chinaShare,
            queries: load.queries,
            queryFile: load.queryFile
        )
    }

    /// Runs it, its errors as the CLI's (a usage error exits 2).
    func runCommand() throws {
        do { try run() } catch let error as StartupError { throw CLIError(error) }
    }
}
