import ArgumentParser
import BundledData
import Foundation
import Gazetteer
import HTTPAPI
import Logging
import Metrics
import Prometheus

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the v1 HTTP API.")

    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on.") var port: Int = 8080
    @Option(help: "API key for writes (or env POI_API_KEY); required to listen on a non-loopback address.") var apiKey: String?
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let configuration = ServerConfiguration(host: host, port: port, apiKey: apiKey ?? ProcessInfo.processInfo.environment["POI_API_KEY"])
        do { try configuration.validate() } catch { throw CLIError.usage(error.description) }
        let engine = try database.openEngine()
        let gazetteer = try loadGazetteer(database.dataDir)
        var logger = Logger(label: "poi")
        logger.logLevel = .info
        let counts = engine.counts
        logger.info("serving \(counts.pois) POIs and \(counts.pins) pins on http://\(host):\(port)")
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let app = buildApplication(configuration: configuration, engine: engine, gazetteer: gazetteer, metrics: registry, logger: logger)
        try await app.runService()
    }
}
