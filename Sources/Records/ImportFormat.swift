/// A file format the importer reads.
public enum ImportFormat: String, Sendable, CaseIterable {
    case jsonl, geojson, csv
    /// OpenStreetMap's protocol-buffer format (`.osm.pbf`): POIs, addresses and streets, see `OSMImporter`.
    case osmpbf
    /// An OpenStreetMap change file (`.osc`, osmChange XML, gzip-compressed or not) applied to an extract imported
    /// before: see `OSMImporter.apply`.
    case osmchange

    /// The format named by a file's extension (`.jsonl`/`.ndjson`, `.geojson`/`.json`, `.csv`, `.osm.pbf`/`.pbf`, `.osc`),
    /// ignoring `.gz`.
    public init?(path: String) {
        var name = path.lowercased()
        if name.hasSuffix(".pbf") {
            self = .osmpbf
            return
        }
        if name.hasSuffix(".gz") { name.removeLast(3) }
        if name.hasSuffix(".jsonl") || name.hasSuffix(".ndjson") {
            self = .jsonl
        } else if name.hasSuffix(".geojson") || name.hasSuffix(".json") {
            self = .geojson
        } else if name.hasSuffix(".csv") {
            self = .csv
        } else if name.hasSuffix(".osc") {
            self = .osmchange
        } else {
            return nil
        }
    }
}

/// Which table records go to.
public enum RecordKind: String, Sendable, CaseIterable {
    case poi, pin
}

/// One rejected input row.
public struct ImportProblem: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let reason: String
    /// "file:line: reason"; an OpenStreetMap problem has no line (0) and names its object in the reason.
    public var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }

    public init(file: String, line: Int, reason: String) { (self.file, self.line, self.reason) = (file, line, reason) }
}

extension Array where Element == ImportProblem {
    /// How many problems a report keeps with their reasons; past them, problems are only counted.
    public static var kept: Int { 1_000 }

    /// Keeps `problem` if the report has room for it.
    public mutating func keep(_ problem: ImportProblem) { if count < Self.kept { append(problem) } }

    /// Keeps as many of `problems`, first first, as the report has room for.
    public mutating func keep(contentsOf problems: some Collection<ImportProblem>) {
        append(contentsOf: problems.prefix(Swift.max(0, Self.kept - count)))
    }
}

/// The problems of an OpenStreetMap import or change file: the first `[ImportProblem].kept` with their reasons, and
/// how many there were in all.
public struct ImportProblems: Sendable, Equatable {
    /// The first problems, with their reasons.
    public private(set) var kept: [ImportProblem] = []
    /// How many problems there were, kept or only counted.
    public private(set) var total = 0

    public init() {}

    public mutating func add(_ problem: ImportProblem) {
        total += 1
        kept.keep(problem)
    }

    public mutating func add(contentsOf problems: some Collection<ImportProblem>) {
        total += problems.count
        kept.keep(contentsOf: problems)
    }

    /// Another report's problems after these: as many of its kept ones as there is room for, and its total.
    public mutating func add(_ other: ImportProblems) {
        total += other.total
        kept.keep(contentsOf: other.kept)
    }
}

/// A row of an import, parsed and validated.
public enum ImportedRecord: Sendable, Equatable {
    case poi(POIRecord)
    case pin(PinRecord)

    public var id: String {
        switch self {
        case .poi(let poi): return poi.id
        case .pin(let pin): return pin.id
        }
    }
}

/// What an import did.
public struct ImportReport: Sendable {
    /// Distinct records imported (rows written less duplicates).
    public var imported = 0
    /// Rows written, duplicates included.
    public var written = 0
    public var skipped = 0
    /// Rows whose id an earlier row of the same import already had (the later row wins).
    public var duplicates = 0
    /// The first problems met (at most `[ImportProblem].kept`), in order.
    public var problems: [ImportProblem] = []
    public var seconds = 0.0

    public init() {}
}

/// An import that stopped: a file that cannot be read, or a bad row under `strict`.
public enum ImportError: Error, CustomStringConvertible {
    case cannotRead(String)
    case rejected(ImportProblem)
    case storage(CatalogError)
    /// Stopped between two batches (the server shut down): the batches before it are in, the rest is not.
    case interrupted(String)

    public var description: String {
        switch self {
        case .cannotRead(let path): return "cannot read \(path)"
        case .rejected(let problem): return "\(problem.description) (strict import: nothing from \(problem.file) was imported)"
        case .storage(let error): return error.description
        case .interrupted(let reason): return reason
        }
    }
}
