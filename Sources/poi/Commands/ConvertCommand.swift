import ArgumentParser
import Foundation
import GeoCore

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert coordinates between wgs84, gcj02, bd09 and EPSG:<code>.",
        discussion: """
            With --lat and --lon, converts one point. Without them, reads "x,y" lines from standard input \
            (x = longitude or easting, y = latitude or northing) and writes "x,y" lines in the same order.
            """
    )

    @Option(help: "Source CRS: wgs84, gcj02, bd09 or EPSG:<code>.") var from: String
    @Option(help: "Target CRS: wgs84, gcj02, bd09 or EPSG:<code>.") var to: String
    @Option(help: "Latitude (or northing) of one point.") var lat: Double?
    @Option(help: "Longitude (or easting) of one point.") var lon: Double?

    func validate() throws {
        if (lat == nil) != (lon == nil) {
            throw ValidationError("--lat and --lon must be given together")
        }
    }

    func run() throws {
        let source: CRS
        let target: CRS
        do {
            source = try CRS(parsing: from)
            target = try CRS(parsing: to)
        } catch {
            throw CLIError.usage("--from/--to: \(error.description)")
        }
        if let lat, let lon {
            let point = try convert([XY(x: lon, y: lat)], source, target, lineNumbers: nil)
            print(format(point[0]))
            return
        }
        try convertStream(source, target)
    }

    /// Streams stdin in batches so one PROJ transformation serves many points and memory stays flat.
    private func convertStream(_ source: CRS, _ target: CRS) throws {
        let batchSize = 65_536
        var batch: [XY] = []
        batch.reserveCapacity(batchSize)
        var lineNumbers: [Int] = []
        var lineNumber = 0
        var output = ""
        func flush() throws {
            guard !batch.isEmpty else { return }
            let converted = try convert(batch, source, target, lineNumbers: lineNumbers)
            output.removeAll(keepingCapacity: true)
            for point in converted {
                output += format(point)
                output += "\n"
            }
            FileHandle.standardOutput.write(Data(output.utf8))
            batch.removeAll(keepingCapacity: true)
            lineNumbers.removeAll(keepingCapacity: true)
        }
        while let line = readLine(strippingNewline: true) {
            lineNumber += 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2,
                let x = DecimalNumber.parse(parts[0].trimmingCharacters(in: .whitespaces)),
                let y = DecimalNumber.parse(parts[1].trimmingCharacters(in: .whitespaces))
            else {
                try flush()
                throw CLIError.usage("line \(lineNumber): expected two numbers \"x,y\", got \"\(String(trimmed.prefix(80)))\"")
            }
            lineNumbers.append(lineNumber)
            batch.append(XY(x: x, y: y))
            if batch.count == batchSize { try flush() }
        }
        try flush()
    }

    private func convert(_ points: [XY], _ source: CRS, _ target: CRS, lineNumbers: [Int]?) throws -> [XY] {
        var points = points
        do {
            try CoordinateConverter.shared.convert(&points, from: source, to: target)
        } catch {
            if case .unknownCRS = error { throw CLIError.usage("--from/--to: \(error.description)") }
            if case .invalidPoint(let index, let reason) = error {
                throw CLIError.usage(lineNumbers.map { "line \($0[index]): \(reason)" } ?? reason)
            }
            throw CLIError.usage(error.description)
        }
        return points
    }

    private func format(_ point: XY) -> String { "\(point.x),\(point.y)" }
}
