import ArgumentParser
import Bench
import BundledData
import Catalog
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

struct WireBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire",
        abstract: "A read request through the server's byte lane, from its bytes to the response's, without sockets."
    )
    @OptionGroup var data: BenchDataOptions
    @OptionGroup var load: BenchQueryOptions
    @Option(help: "The database poi serve would open.") var db: String
    @Option(help: "Request targets (path and query), one per line, answered in turn (--queries of them, cycling).") var paths: String

    func run() throws {
        var run = BenchRun(op: .wire, data: data, load: load)
        (run.db, run.paths) = (db, paths)
        try run.runCommand()
    }
}

/// The address index an OpenStreetMap import builds, and its snapshot, from a database's addresses: the step of
/// `poi import` that runs beside the store's write, timed alone.
struct AddressIndexBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "address-index",
        abstract: "Builds the address index from a database's addresses and writes its snapshot, --rounds times."
    )
    @Option(help: "A database with imported addresses (poi import FILE.osm.pbf --db …).") var db: String
    @Option(help: "How many times to build and write.") var rounds: Int = 3
    @Option(help: "Leave the last snapshot written at this path (to compare builds).") var out: String?

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }

    func run() throws {
        let data: AddressData
        do { data = try CatalogStore(path: db).loadAddresses().asStored } catch { throw CLIError.failure("\(error)") }
        guard !data.addresses.isEmpty || !data.streets.isEmpty else { throw CLIError.usage("--db: \(db) has no addresses") }
        let clock = ContinuousClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poi-address-bench-\(getpid())").path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw CLIError.failure("cannot make \(directory): \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var builds: [Double] = []
        var writes: [Double] = []
        for _ in 0..<rounds {
            var index = AddressIndex.empty
            builds.append(seconds(clock.measure { index = AddressIndex(data) }))
            let path = out ?? directory + "/addresses.snapshot"
            do { writes.append(seconds(try clock.measure { try index.writeSnapshot(to: path, generation: "bench") })) } catch {
                throw CLIError.failure("\(error)")
            }
        }
        func list(_ values: [Double]) -> String { values.map { String(format: "%.3f", $0) }.joined(separator: ",") }
        print(
            #"{"op":"address-index","houses":\#(data.addresses.count),"streets":\#(data.streets.count),"build_s":[\#(list(builds))],"write_s":[\#(list(writes))]}"#
        )
    }
}
