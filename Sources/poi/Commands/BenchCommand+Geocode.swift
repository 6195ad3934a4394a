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

/// The options of the geocoding benchmarks.
struct GeocodeBenchOptions: BenchOptionGroups {
    @OptionGroup var data: BenchDataOptions
    @OptionGroup var load: BenchQueryOptions

    @Option(help: "Also search this database's imported addresses and streets (house-level geocoding).") var db: String?

    func configure(_ run: inout BenchRun) { run.db = db }
}

struct GeocodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "geocode", abstract: "Forward geocoding, 10 results.")
    @OptionGroup var options: GeocodeBenchOptions

    func run() throws { try options.run(.geocode) }
}

struct AutocompleteBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "autocomplete", abstract: "Place-name prefixes, 5 results.")
    @OptionGroup var options: GeocodeBenchOptions

    func run() throws { try options.run(.autocomplete) }
}
