import ArgumentParser
import BundledData
import Datasets
import Foundation
import Gazetteer
import Records

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write deterministic synthetic POIs as JSONL on standard output.",
        discussion: "Places are drawn from the bundled gazetteer weighted by population; the same seed gives the same bytes."
    )

    @Option(help: "Number of records (1 to 100000000).") var count: Int
    @OptionGroup var source: GeneratorOptions

    func validate() throws {
        guard (1...100_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 100000000") }
    }

    func run() throws {
        var generator = try source.generator()
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

/// What synthetic data is drawn from: the bundled gazetteer's places, and a seed.
struct GeneratorOptions: ParsableArguments {
    @Option(help: "Random seed (the same seed gives the same records and queries).") var seed: UInt64 = 42
    @Option(help: "Directory of the bundled data (default: data/, or POI_DATA_DIR).") var dataDir: String?
    @Option(help: "Share of records placed in China, with Chinese chain and branch names (0 to 1; default: by population).")
    var chinaShare: Double?

    func validate() throws {
        if let chinaShare, !(0...1).contains(chinaShare) { throw ValidationError("--china-share must be a number from 0 to 1") }
    }

    func generator() throws -> SyntheticPOIGenerator { SyntheticPOIGenerator(places: try loadPlaces(dataDir), seed: seed, chinaShare: chinaShare) }
}
