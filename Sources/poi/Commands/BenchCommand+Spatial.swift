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
struct SpatialBenchOptions: BenchOptionGroups {
    @OptionGroup var data: BenchDataOptions
    @OptionGroup var load: BenchQueryOptions

    @Option(help: "JSONL records to index instead of generated ones.") var input: String?

    func configure(_ run: inout BenchRun) { run.input = input }

    /// A distance option is a positive, finite number of metres.
    static func requireMetres(_ value: Double, _ option: String) throws {
        guard value > 0, value.isFinite else { throw ValidationError("\(option) must be a positive number of metres") }
    }
}

struct KNNBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "knn", abstract: "The k nearest records of each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Neighbours per query (1 to 10000).") var k: Int = 10

    func validate() throws {
        guard (1...10_000).contains(k) else { throw ValidationError("--k must be between 1 and 10000") }
    }

    func run() throws { try options.run(.knn) { $0.k = k } }
}

struct RadiusBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "radius", abstract: "Every record within a radius of each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Radius in metres.") var radius: Double = 1_000

    func validate() throws { try SpatialBenchOptions.requireMetres(radius, "--radius") }

    func run() throws { try options.run(.radius) { $0.radius = radius } }
}

struct BoxBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bbox", abstract: "Every record in a square box around each origin.")
    @OptionGroup var options: SpatialBenchOptions
    @Option(help: "Side of the square box in metres.") var boxSize: Double = 600

    func validate() throws { try SpatialBenchOptions.requireMetres(boxSize, "--box-size") }

    func run() throws { try options.run(.bbox) { $0.boxSize = boxSize } }
}
