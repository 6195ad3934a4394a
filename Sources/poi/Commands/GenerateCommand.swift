import ArgumentParser
import BundledData
import Catalog
import Foundation
import Gazetteer

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write deterministic synthetic POIs as JSONL on standard output.",
        discussion: "Places are drawn from the bundled gazetteer weighted by population; the same seed gives the same bytes."
    )

    @Option(help: "Number of records (1 to 100000000).")
    var count: Int

    @Option(help: "Random seed.")
    var seed: UInt64 = 42

    @Option(help: "Directory of the bundled data (default: data/, or POI_DATA_DIR).")
    var dataDir: String?

    func validate() throws {
        guard (1...100_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 100000000") }
    }

    func run() throws {
        let places = try loadPlaces(dataDir)
        var generator = SyntheticPOIGenerator(places: places, seed: seed)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        let out = FileHandle.standardOutput
        for _ in 0..<count {
            generator.next().jsonLine(into: &buffer)
            if buffer.count >= 1 << 20 {
                out.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        out.write(Data(buffer))
    }
}

/// Loads the gazetteer places, turning a missing data directory into a clear failure.
func loadPlaces(_ dataDir: String?) throws -> [Place] {
    let directory = DataDirectory.resolve(dataDir)
    do {
        return try PlaceFile.loadPlaces(directory: directory)
    } catch let error as DataFileError {
        throw CLIError.failure("\(error.description) (set --data-dir or POI_DATA_DIR to the bundled data directory)")
    }
}
