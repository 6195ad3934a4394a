import ArgumentParser
import Catalog
import Foundation
import GeoCore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import records from JSONL, GeoJSON or CSV files into a database.",
        discussion: "Bad rows are reported with file:line and skipped; --strict aborts and rolls back instead. Re-importing an id updates it."
    )

    @Argument(help: "Files to import.") var files: [String]
    @Option(help: "jsonl, geojson or csv (default: from the extension).") var format: String?
    @Option(help: "Coordinate system of the input: wgs84, gcj02, bd09 or EPSG:<code>.") var crs: String = "wgs84"
    @Option(help: "poi or pin.") var kind: String = "poi"
    @Flag(help: "Stop at the first bad row and import nothing from that file.") var strict = false
    @Option(help: "Database to import into (created if missing; default var/poi.sqlite).") var db: String?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file") }
        if let format, ImportFormat(rawValue: format) == nil { throw ValidationError("--format must be jsonl, geojson or csv") }
        guard RecordKind(rawValue: kind) != nil else { throw ValidationError("--kind must be poi or pin") }
    }

    func run() throws {
        let source: CRS
        do { source = try CRS(parsing: crs) } catch { throw CLIError.usage("--crs: \(error.description)") }
        let store: CatalogStore
        do { store = try CatalogStore(path: db ?? BundledDatabase.defaultPath) } catch { throw CLIError.failure(error.description) }
        var failed = false
        for file in files {
            let bar = ProgressBar(label: "importing \((file as NSString).lastPathComponent)")
            let options = RecordImporter.Options(format: format.flatMap(ImportFormat.init(rawValue:)), crs: source, kind: RecordKind(rawValue: kind)!, strict: strict)
            let importer = RecordImporter(store: store, options: options) { done, read, total in
                bar.update(done: done, fraction: total > 0 ? Double(read) / Double(total) : 0)
            }
            do {
                let report = try importer.importFile(file)
                bar.finish()
                for problem in report.problems { FileHandle.standardError.write(Data("\(problem.description)\n".utf8)) }
                let rate = report.seconds > 0 ? Int(Double(report.imported) / report.seconds) : report.imported
                // Test hook for the durability test: die the hard way right after the commits were acknowledged,
                // with the database still open and nothing flushed or closed by us.
                if ProcessInfo.processInfo.environment["POI_TEST_KILL_AFTER_COMMIT"] == "1" { kill(getpid(), SIGKILL) }
                print("\(file): imported \(report.imported), skipped \(report.skipped) in \(String(format: "%.2f", report.seconds)) s (\(rate) records/s)")
            } catch {
                bar.finish()
                FileHandle.standardError.write(Data("poi: \(error.description)\n".utf8))
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }
}
