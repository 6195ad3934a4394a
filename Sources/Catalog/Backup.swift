import Crypto
import Foundation
import GRDB
import Records

/// Online backups of the embedded store (`poi backup DB OUT`, `poi restore OUT DB`).
///
/// **What is copied:** the SQLite database only, by `VACUUM INTO` from one read transaction — a consistent copy as of
/// the moment the backup began, taken while the server reads and writes (WAL readers never block the writer, nor it
/// them), holding every write acknowledged before that moment. The mapped snapshots (`.snapshot`, `.addresses`,
/// `.gazetteer`) are not copied: they are caches of the database, each checked against the database's identity and
/// change sequence when opened, and the first start after a restore rebuilds them from the copy. Copying them beside
/// a live writer could pair a snapshot with a database it does not match, which the check would refuse anyway.
///
/// **The manifest** (`manifest.json`) names the format, when and from where the copy was taken, the store's identity
/// and change sequence, the record counts, and each file's size and SHA-256. A restore refuses a backup whose files
/// do not match it, by file and rule, before touching the target.
public enum Backup {
    public static let format = "poi-backup/1"
    public static let databaseName = "poi.sqlite"

    public struct Manifest: Codable, Sendable, Equatable {
        public struct File: Codable, Sendable, Equatable {
            public var name: String
            public var bytes: Int
            public var sha256: String
        }

        public var format: String
        public var created: String
        public var source: String
        public var storeIdentity: String
        public var sequence: Int64
        public var pois: Int
        public var pins: Int
        public var files: [File]
    }

    /// Why a backup or a restore did not happen, named by file and rule.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Copies `database` into the new directory `directory` with its manifest, while other processes may read and
    /// write the database.
    @discardableResult
    public static func take(database: String, into directory: String) throws(Failure) -> Manifest {
        guard FileManager.default.fileExists(atPath: database) else { throw Failure("\(database): no such database") }
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw Failure("\(directory) exists: a backup goes into a new directory (nothing is overwritten)")
        }
        let copy = directory + "/" + databaseName
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure("cannot make \(directory): \(error.localizedDescription)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(CatalogStore.busyTimeout)
        let facts: (identity: String, sequence: Int64, pois: Int, pins: Int)
        do {
            let queue = try DatabaseQueue(path: database, configuration: configuration)
            // VACUUM cannot run inside a transaction; it reads the source in one read transaction of its own.
            try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
            try queue.close()
            // The facts are read from the copy, so that they describe exactly what was copied.
            let copied = try DatabaseQueue(path: copy, configuration: configuration)
            facts = try copied.read { db in
                let state = try Row.fetchOne(db, sql: "SELECT identity, sequence FROM store_state WHERE id = 1")
                return (
                    state?["identity"] ?? "", state?["sequence"] ?? 0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM poi") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pin") ?? 0
                )
            }
            try copied.close()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw Failure("\(database): the copy failed: \(error)")
        }
        let manifest = Manifest(
            format: format,
            created: ISO8601DateFormatter().string(from: Date()),
            source: database,
            storeIdentity: facts.identity,
            sequence: facts.sequence,
            pois: facts.pois,
            pins: facts.pins,
            files: [try describe(copy, name: databaseName)]
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try encoder.encode(manifest).write(to: URL(fileURLWithPath: directory + "/manifest.json"), options: .atomic)
        } catch {
            throw Failure("cannot write \(directory)/manifest.json: \(error.localizedDescription)")
        }
        return manifest
    }

    /// Checks the backup in `directory` against its manifest: the format, every file's size and SHA-256, the
    /// database's integrity and its record counts. Returns the manifest, or the first thing that does not match.
    public static func verify(_ directory: String) throws(Failure) -> Manifest {
        let manifestPath = directory + "/manifest.json"
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw Failure("\(manifestPath): missing (not a backup made by poi backup)")
        }
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: data) } catch {
            throw Failure("\(manifestPath): not a backup manifest (\(error))")
        }
        guard manifest.format == format else { throw Failure("\(manifestPath): format \(manifest.format), this poi reads \(format)") }
        guard manifest.files.contains(where: { $0.name == databaseName }) else { throw Failure("\(manifestPath): names no \(databaseName)") }
        for file in manifest.files {
            guard !file.name.contains("/"), file.name != ".." else { throw Failure("\(manifestPath): a file name must not name a directory") }
            let path = directory + "/" + file.name
            guard FileManager.default.fileExists(atPath: path) else { throw Failure("\(path): missing") }
            let found = try describe(path, name: file.name)
            guard found.bytes == file.bytes else {
                throw Failure("\(path): \(found.bytes) bytes, the manifest says \(file.bytes) (the backup is damaged)")
            }
            guard found.sha256 == file.sha256 else { throw Failure("\(path): its SHA-256 does not match the manifest (the backup is damaged)") }
        }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: directory + "/" + databaseName, configuration: configuration)
            let (check, pois, pins) = try queue.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "", try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM poi") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pin") ?? -1
                )
            }
            try queue.close()
            guard check == "ok" else { throw Failure("\(directory)/\(databaseName): SQLite's integrity check fails: \(check)") }
            guard pois == manifest.pois, pins == manifest.pins else {
                throw Failure("\(directory)/\(databaseName): \(pois) POIs and \(pins) pins, the manifest says \(manifest.pois) and \(manifest.pins)")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("\(directory)/\(databaseName): not a readable database (\(error))")
        }
        return manifest
    }

    /// Puts the verified backup in `directory` in place as `database`. The target's write-ahead log and snapshots go
    /// first (an old WAL beside a new database file would be replayed into it); the copy is renamed into place last,
    /// so a crash leaves either the old database or the new one. Refuses an existing database unless `replacing`.
    @discardableResult
    public static func restore(_ directory: String, to database: String, replacing: Bool) throws(Failure) -> Manifest {
        let manifest = try verify(directory)
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: database) && !replacing {
            throw Failure("\(database) exists; stop the server that uses it and pass --force to replace it")
        }
        let staging = database + ".restoring"
        do {
            let parent = (database as NSString).deletingLastPathComponent
            if !parent.isEmpty { try fileManager.createDirectory(atPath: parent, withIntermediateDirectories: true) }
            try? fileManager.removeItem(atPath: staging)
            try fileManager.copyItem(atPath: directory + "/" + databaseName, toPath: staging)
            let fd = open(staging, O_RDONLY)
            if fd >= 0 {
                fsync(fd)
                close(fd)
            }
            for suffix in ["-wal", "-shm", ".snapshot", ".snapshot.addresses", ".snapshot.addresses.changes", ".gazetteer", ".snapshot.gazetteer"] {
                try? fileManager.removeItem(atPath: database + suffix)
            }
            guard rename(staging, database) == 0 else {
                throw Failure("cannot rename \(staging) to \(database): \(String(cString: strerror(errno)))")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("cannot restore into \(database): \(error.localizedDescription)")
        }
        return manifest
    }

    private static func describe(_ path: String, name: String) throws(Failure) -> Manifest.File {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Failure("\(path): cannot be read") }
        defer { try? handle.close() }
        var hash = SHA256()
        var bytes = 0
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            bytes += chunk.count
            hash.update(data: chunk)
        }
        return Manifest.File(name: name, bytes: bytes, sha256: hash.finalize().map { String(format: "%02x", $0) }.joined())
    }
}
