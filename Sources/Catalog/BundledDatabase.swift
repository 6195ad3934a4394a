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

    /// Builds a database at `path` holding the bundled POIs (OpenStreetMap Helsinki). Written to a temporary file
    /// and renamed into place, so an interrupted first start leaves no half-built database behind.
    /// - Returns: the number of records.
    @discardableResult
    public static func create(at path: String, dataDirectory: String, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let temporary = path + ".building"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        var lines: [String] = []
        try GzipFile.forEachLine(dataDirectory + "/helsinki_pois.jsonl.gz") { lines.append(String($0)) }
        let parser = RecordParser(kind: .poi, crs: .wgs84, now: Timestamp.now())
        var rows: [RecordParser.Parsed] = []
        for (number, line) in lines.enumerated() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw ImportError.cannotRead("helsinki_pois.jsonl.gz:\(number + 1): not a JSON object")
            }
            do { rows.append(try parser.parse(object)) } catch { throw ImportError.cannotRead("helsinki_pois.jsonl.gz:\(number + 1): \(error.reason)") }
        }
        do {
            let store = try CatalogStore(path: temporary)
            var done = 0
            for batch in stride(from: 0, to: rows.count, by: 500) {
                let slice = Array(rows[batch..<min(batch + 500, rows.count)])
                try RecordImporter.write(slice, to: store)
                done += slice.count
                progress?(done, rows.count)
            }
            try store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
        return rows.count
    }
}
