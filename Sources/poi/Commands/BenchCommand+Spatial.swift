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

/// The options of the spatial benchmarks.
struct SpatialBenchOptions: ParsableArguments {
    @OptionGroup var data: BenchDataOptions
    @OptionGroup var load: BenchQueryOptions

    @Option(help: "JSONL records to index instead of generated ones.") var input: String?

    func runner(_ op: BenchRun.Operation) -> BenchRun {
        var run = BenchRun(op: op, data: data, load: load)
        run.input = input
        return run
    }
}

struct KNNBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "knn", abstract: "The k nearest records of each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Neighbours per query (1 to 10000).") var k: Int = 10

    func run() throws {
        guard (1...10_000).contains(k) else { throw CLIError.usage("--k must be between 1 and 10000") }
        var run = options.runner(.knn)
        run.k = k
        try run.runCommand()
    }
}

struct RadiusBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "radius", abstract: "Every record within a radius of each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Radius in metres.") var radius: Double = 1_000

    func run() throws {
        guard radius > 0, radius.isFinite else { throw CLIError.usage("--radius must be a positive number of metres") }
        var run = options.runner(.radius)
        run.radius = radius
        try run.runCommand()
    }
}

struct BoxBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bbox", abstract: "Every record in a square box around each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Side of the square box in metres.") var boxSize: Double = 600

    func run() throws {
        guard boxSize > 0, boxSize.isFinite else { throw CLIError.usage("--box-size must be a positive number of metres") }
        var run = options.runner(.bbox)
        run.boxSize = boxSize
        try run.runCommand()
    }
}
