import GeoCore

/// Where a store's content stands: a random identity made with the store, and the number of write transactions
/// committed to it. Snapshots of the in-memory indexes carry both; a replica following a change feed keeps the
/// sequence it has applied.
public struct ChangeSequence: Sendable, Equatable, CustomStringConvertible {
    public var identity: String
    public var sequence: UInt64

    public init(identity: String, sequence: UInt64) {
        (self.identity, self.sequence) = (identity, sequence)
    }

    public var description: String { "\(identity)#\(sequence)" }
}

/// One change of a write transaction.
public enum StoreChange: Sendable {
    /// Create or replace a record by id.
    case put(ImportedRecord)
    /// Delete a record by id (nothing when there is none).
    case delete(RecordKind, id: String)
}

/// The store of record: the durable home of POIs and pins that the in-memory engine is built from. Two
/// implementations: `CatalogStore` (an embedded SQLite file, owned by one process) and `PostgresStore` (PostgreSQL,
/// shared by several servers, each following its change feed).
///
/// Every method blocks until the store answers; writes are durable when `commit` returns.
public protocol StoreOfRecord: AnyObject, Sendable {
    /// The store for messages: a file path, or a URL without its password.
    var location: String { get }

    /// The store's identity and change sequence now.
    func changeSequence() throws(CatalogError) -> ChangeSequence

    func poiCount() throws(CatalogError) -> Int

    /// Every record and the change sequence they stand at, read in one transaction (a consistent view while others
    /// write): POIs handed over `blockSize` at a time, so a loader never holds them all at once; then all pins.
    func loadAll(blockSize: Int, pois: ([POIRecord]) -> Void) throws(CatalogError) -> (pins: [PinRecord], sequence: ChangeSequence)

    /// Commits `changes` in one transaction, counted as one step of the change sequence; answers the sequence just
    /// before and just after it (when `before` is what a reader last saw, nobody else wrote in between).
    @discardableResult
    func commit(_ changes: [StoreChange]) throws(CatalogError) -> (before: ChangeSequence, after: ChangeSequence)

    /// The change feed that servers sharing this store follow; nil when one process owns the store.
    var feed: (any ChangeFeed)? { get }

    /// Ids of the POIs whose id starts with `prefix` (the `osm-` POIs an OpenStreetMap re-import replaces).
    func poiIDs(prefix: String) throws(CatalogError) -> [String]

    /// Whether the store keeps addresses and street lines (SQLite and PostgreSQL do).
    var keepsAddresses: Bool { get }

    /// The addresses and street lines of the last OpenStreetMap import.
    func loadAddresses() throws(CatalogError) -> AddressData

    /// Replaces every address and street line with `data`, in one transaction.
    /// - Parameter osm: where in OpenStreetMap's history the addresses stand (the change file they come from), kept in
    ///   the same transaction by a store that keeps no mirror of its own (PostgreSQL), so that its replicas report it
    ///   (`osmMirrorState`); nil leaves what is kept. A SQLite database keeps it in its mirror and ignores this.
    /// - Returns: the addresses' new generation (`addressGeneration`).
    @discardableResult
    func replaceAddresses(_ data: AddressData, osm: OSMMirrorState?) throws(CatalogError) -> String

    /// A token that changes with every `replaceAddresses` (nil: the store keeps no addresses): what a snapshot of
    /// the address index is checked against.
    func addressGeneration() throws(CatalogError) -> String?

    /// Keeps an OpenStreetMap import's objects for change files (`OSMMirror`); stores that apply none ignore it.
    func replaceOSMMirror(_ encoded: EncodedOSMMirror) throws(CatalogError)

    /// Whether change files can be applied to this store's OpenStreetMap import (it keeps the mirror they need).
    var appliesOSMChanges: Bool { get }

    /// Where the store's OpenStreetMap import stands in OSM's history: a SQLite database's mirror's, a shared store's as
    /// the last change file written to it left it (`replaceAddresses(_:osm:)`); nil when it holds none.
    func osmMirrorState() throws(CatalogError) -> OSMMirrorState?

    /// The embedded database file the store is (what `poi backup` copies); nil for a server's store.
    var databaseFile: String? { get }
}

extension StoreOfRecord {
    public var keepsAddresses: Bool { false }

    public func loadAddresses() throws(CatalogError) -> AddressData { AddressData() }

    @discardableResult
    public func replaceAddresses(_ data: AddressData, osm: OSMMirrorState?) throws(CatalogError) -> String {
        throw .storage("\(location) keeps no addresses or streets (only SQLite databases do)")
    }

    /// Replaces every address and street line, leaving the OpenStreetMap state as it is.
    @discardableResult
    public func replaceAddresses(_ data: AddressData) throws(CatalogError) -> String { try replaceAddresses(data, osm: nil) }

    public func addressGeneration() throws(CatalogError) -> String? { nil }

    public func replaceOSMMirror(_ encoded: EncodedOSMMirror) throws(CatalogError) {}

    public var appliesOSMChanges: Bool { false }

    public func osmMirrorState() throws(CatalogError) -> OSMMirrorState? { nil }

    public var databaseFile: String? { nil }

    /// By reading every POI: for stores without a faster way.
    public func poiIDs(prefix: String) throws(CatalogError) -> [String] {
        var ids: [String] = []
        _ = try loadAll(blockSize: 10_000) { block in
            for poi in block where poi.id.hasPrefix(prefix) { ids.append(poi.id) }
        }
        return ids
    }
}

/// The records changed since a sequence number, as they are now.
public struct ChangeSet: Sendable {
    /// The store's sequence the records stand at.
    public var sequence: ChangeSequence
    /// Records created or replaced since.
    public var records: [ImportedRecord]
    /// Records deleted since (and not created again).
    public var deleted: [(kind: RecordKind, id: String)]

    public init(sequence: ChangeSequence, records: [ImportedRecord] = [], deleted: [(kind: RecordKind, id: String)] = []) {
        self.sequence = sequence
        self.records = records
        self.deleted = deleted
    }

    public var isEmpty: Bool { records.isEmpty && deleted.isEmpty }
}

/// A numbered change log that servers sharing one store follow (PostgreSQL). Every write transaction adds its
/// changed ids under its sequence number; a follower asks for what changed after the last number it applied and
/// gets the current records (so applying a change set twice, or out of a snapshot taken mid-way, converges).
public protocol ChangeFeed: AnyObject, Sendable {
    /// What changed after `sequence`, read in one transaction.
    /// - Throws: `.changesTrimmed` when the log no longer reaches back to `sequence` (rebuild from the tables).
    func changes(after sequence: UInt64) throws(CatalogError) -> ChangeSet

    /// How many records changed after `sequence` (each counted once however often it changed).
    func changedRecordCount(after sequence: UInt64) throws(CatalogError) -> Int

    /// Blocks until the store may have committed a change after `sequence` (a wake-up from the store), or until
    /// `timeout` seconds have passed. Answers whether a wake-up came.
    @discardableResult
    func waitForChange(after sequence: UInt64, timeout: Double) -> Bool

    /// Records where the replica named `replica` stands (its applied sequence and that of its last snapshot), so
    /// that the log is trimmed only behind every live replica.
    func report(replica: String, applied: UInt64, snapshot: UInt64?) throws(CatalogError)

    /// Deletes changes that every replica seen within `retention` seconds has applied and snapshotted, and any older
    /// than `retention`; answers the sequence the log is now trimmed through.
    @discardableResult
    func trim(retention: Double) throws(CatalogError) -> UInt64

    /// The server the feed reads from now (`HOST:PORT`; one of several after a failover), for `/health`.
    var server: String? { get }
}

extension ChangeFeed {
    public var server: String? { nil }
}
