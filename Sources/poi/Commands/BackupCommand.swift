import ArgumentParser
import Catalog
import Foundation
import Records

/// `poi backup DB OUT`: a consistent copy of the embedded store taken while a server uses it (docs/ARCHITECTURE.md,
/// "Operations"); against PostgreSQL, use its own tools (pg_basebackup, pg_dump).
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a database while it is served: OUT gets poi.sqlite and manifest.json (sizes and SHA-256).",
        discussion: """
            The copy holds every write acknowledged before the backup began. The index snapshots are not copied: the \
            first start after `poi restore` rebuilds them from the copy. For a --store postgresql://… use PostgreSQL's \
            own tools (pg_basebackup, pg_dump); replicas reload from the store.
            """
    )

    @Argument(help: "The SQLite database to copy (the server may be running on it).") var database: String
    @Argument(help: "A new directory for the backup.") var out: String

    func run() throws {
        guard !database.hasPrefix("postgres://") && !database.hasPrefix("postgresql://") else {
            throw CLIError.usage("poi backup copies the embedded SQLite store; back up PostgreSQL with pg_basebackup or pg_dump")
        }
        let start = ContinuousClock.now
        let manifest: Backup.Manifest
        do { manifest = try Backup.take(database: database, into: out) } catch { throw CLIError.failure(error.description) }
        let bytes = manifest.files.reduce(0) { $0 + $1.bytes }
        print(
            "backed up \(manifest.pois) POIs and \(manifest.pins) pins (change \(manifest.sequence), \(bytes / 1_024) KiB) into \(out) in \(ContinuousClock.now - start)"
        )
    }
}

/// `poi restore OUT DB`: checks a backup against its manifest and puts it in place.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup made by poi backup in place as DB, after checking every file against its manifest.",
        discussion: """
            A backup whose files do not match their sizes and SHA-256, that fails SQLite's integrity check, or whose \
            record counts differ from the manifest is refused, and DB is left as it was. Stop the server on DB first.
            """
    )

    @Argument(help: "The backup directory.") var backup: String
    @Argument(help: "The database to make.") var database: String
    @Flag(help: "Replace DB when it exists.") var force = false
    @Flag(help: "Only check the backup; write nothing.") var check = false

    func run() throws {
        do {
            if check {
                let manifest = try Backup.verify(backup)
                print("\(backup): a sound backup of \(manifest.pois) POIs and \(manifest.pins) pins taken \(manifest.created)")
                return
            }
            let manifest = try Backup.restore(backup, to: database, replacing: force)
            print(
                "restored \(manifest.pois) POIs and \(manifest.pins) pins (taken \(manifest.created) from \(manifest.source)) into \(database); the next start rebuilds its indexes"
            )
        } catch {
            throw CLIError.failure(error.description)
        }
    }
}
