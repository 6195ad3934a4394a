import Foundation
import Records
import SnapshotFile

/// The records a writer that serves no query (`poi import x.osc.gz`, `poi replicate`) committed to a SQLite store after
/// the index snapshot was written, kept in a file beside it (`path(beside:)`) instead of writing the whole snapshot
/// again: the next start reads the snapshot and applies them, as a replica applies the changes after its snapshot
/// from the store's feed (docs/ARCHITECTURE.md, "OpenStreetMap that stays current"). A file whose `before` is not the
/// snapshot's sequence, or whose `after` is not the store's, is not used: the start builds the index from the store.
struct SnapshotChanges: Codable, Equatable {
    /// The snapshot's store sequence, and the store's after the changes.
    var before: Sequence
    var after: Sequence
    /// In the order committed.
    var changes: [Change]

    struct Sequence: Codable, Equatable {
        var identity: String
        var sequence: UInt64

        init(_ sequence: ChangeSequence) { (identity, self.sequence) = (sequence.identity, sequence.sequence) }
        var changeSequence: ChangeSequence { ChangeSequence(identity: identity, sequence: sequence) }
    }

    enum Change: Codable, Equatable {
        case poi(POIRecord)
        case pin(PinRecord)
        case delete(kind: String, id: String)

        init(_ change: StoreChange) {
            switch change {
            case .put(.poi(let poi)): self = .poi(poi)
            case .put(.pin(let pin)): self = .pin(pin)
            case .delete(let kind, let id): self = .delete(kind: kind.rawValue, id: id)
            }
        }
    }

    static func path(beside snapshot: String) -> String { snapshot + ".changes" }

    /// The file beside the snapshot at `path`; nil when there is none or it cannot be read.
    static func read(beside snapshot: String) -> SnapshotChanges? {
        guard let data = FileManager.default.contents(atPath: path(beside: snapshot)) else { return nil }
        return try? JSONDecoder().decode(SnapshotChanges.self, from: data)
    }

    /// Writes the file beside the snapshot at `path` atomically.
    func write(beside snapshot: String) throws(SnapshotError) {
        let file = Self.path(beside: snapshot)
        do {
            try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw .cannotWrite(path: file, reason: "\(error)")
        }
    }

    /// Applies the changes to `state` (read from the snapshot at `before`) and brings it to `after`.
    func apply(to state: inout EngineState) {
        for change in changes {
            switch change {
            case .poi(let poi): state.put(.poi(poi))
            case .pin(let pin): state.put(.pin(pin))
            case .delete(let kind, let id): if let kind = RecordKind(rawValue: kind) { _ = state.delete(kind, id: id) }
            }
        }
        state.sequence = after.changeSequence
    }
}

extension EngineState {
    /// The store sequence the snapshot at `path` stands at, read from its header alone.
    static func snapshotSequence(at path: String) throws(SnapshotError) -> ChangeSequence {
        let file = try SnapshotReader(path: path, formatVersion: snapshotFormat)
        return ChangeSequence(identity: try file.readString(), sequence: try file.readUInt64())
    }
}

extension SearchEngine {
    /// Past this many changed records kept beside the index snapshot (`SnapshotChanges`) it is written whole again with
    /// them (`forwardSnapshot`): each start applies them one by one, and each writer reads and writes them all.
    public static let keptChangesLimit = 20_000

    /// Brings the index snapshot at `path` forward by `changes`, which the store committed after it — from `before`
    /// to `after`, nothing else in between — for a process that applied change files to a SQLite database and serves
    /// no query (`poi import x.osc.gz`, `poi replicate`). The changes are added to those kept beside the snapshot
    /// (`SnapshotChanges`), which the next start applies over it; past `limit` records the snapshot
    /// is written whole again with them (the mapped state, the records put and deleted as a server applies its writes).
    /// - Returns: what was done; nil, writing nothing (and removing changes kept beside it), when the snapshot and the
    ///   changes kept do not stand at `before` (or cannot be read): the next start builds the index from the store.
    /// - Throws: when the file cannot be written.
    public static func forwardSnapshot(
        at path: String,
        by changes: [StoreChange],
        from before: ChangeSequence,
        to after: ChangeSequence,
        limit: Int = keptChangesLimit
    ) throws(SnapshotError) -> String? {
        guard let at = try? EngineState.snapshotSequence(at: path) else { return nil }
        var kept = SnapshotChanges(before: .init(at), after: .init(at), changes: [])
        if let found = SnapshotChanges.read(beside: path), found.before == kept.before { kept = found }
        guard kept.after.changeSequence == before else {
            try? FileManager.default.removeItem(atPath: SnapshotChanges.path(beside: path))
            return nil
        }
        kept.changes += changes.map(SnapshotChanges.Change.init)
        kept.after = .init(after)
        if kept.changes.count <= limit {
            try kept.write(beside: path)
            return "\(kept.changes.count) changed records kept beside it"
        }
        guard var state = try? EngineState.readSnapshot(from: path, expecting: at) else { return nil }
        kept.apply(to: &state)
        _ = try state.writeSnapshot(to: path)
        try? FileManager.default.removeItem(atPath: SnapshotChanges.path(beside: path))
        return "written again with \(kept.changes.count) changed records"
    }
}
