import Foundation
import Records
import SnapshotFile

/// The records a writer that serves no query (`poi import x.osc.gz`, `poi replicate`) committed to a SQLite store after
/// the index snapshot was written, kept in a file beside it (`path(beside:)`) instead of writing the whole snapshot
/// again: the next start reads the snapshot and applies them, as a replica applies the changes after its snapshot
/// from the store's feed (docs/ARCHITECTURE.md, "OpenStreetMap that stays current"). A file whose `before` is not the
/// snapshot's sequence, or whose `after` is not the store's, is not used: the start builds the index from the store.
///
/// The file is JSON lines: a `Header` naming the snapshot's sequence, then one `Segment` a run appended, each with
/// the store's sequence after it. A run reads only the first and last lines and appends its own, so its cost is its
/// own records, not every record kept since the snapshot. A line cut short (a stop while appending) makes the file
/// unreadable, and so unused: never half applied.
struct SnapshotChanges: Equatable {
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

    /// The file's first line.
    struct Header: Codable, Equatable {
        var before: Sequence
    }

    /// A line a run appended: its changes, the store's sequence after them, and how many changes the file holds
    /// with them.
    struct Segment: Codable, Equatable {
        var after: Sequence
        var count: Int
        var changes: [Change]
    }

    static func path(beside snapshot: String) -> String { snapshot + ".changes" }

    static func lines(beside snapshot: String) -> [Data]? {
        guard let data = FileManager.default.contents(atPath: path(beside: snapshot)), data.last == UInt8(ascii: "\n") else { return nil }
        let lines = data.split(separator: UInt8(ascii: "\n"))
        return lines.count >= 2 ? lines.map { Data($0) } : nil
    }

    /// The whole file beside the snapshot at `path`; nil when there is none or it cannot be read.
    static func read(beside snapshot: String) -> SnapshotChanges? {
        guard let lines = lines(beside: snapshot), let header = try? JSONDecoder().decode(Header.self, from: lines[0]) else { return nil }
        var all = SnapshotChanges(before: header.before, after: header.before, changes: [])
        for line in lines.dropFirst() {
            guard let segment = try? JSONDecoder().decode(Segment.self, from: line) else { return nil }
            all.changes += segment.changes
            all.after = segment.after
        }
        return all
    }

    /// The snapshot's sequence the file beside it names, the store's after its last line, and how many changes it
    /// holds: its first and last lines read alone.
    static func ends(beside snapshot: String) -> (before: Sequence, after: Sequence, count: Int)? {
        guard let lines = lines(beside: snapshot), let header = try? JSONDecoder().decode(Header.self, from: lines[0]),
            let last = try? JSONDecoder().decode(Segment.self, from: lines[lines.count - 1])
        else { return nil }
        return (header.before, last.after, last.count)
    }

    /// Starts the file beside the snapshot with `segment`, atomically, in place of any there was.
    static func start(beside snapshot: String, before: Sequence, _ segment: Segment) throws(SnapshotError) {
        let file = path(beside: snapshot)
        do {
            var data = try JSONEncoder().encode(Header(before: before))
            data.append(UInt8(ascii: "\n"))
            data.append(try JSONEncoder().encode(segment))
            data.append(UInt8(ascii: "\n"))
            try data.write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw .cannotWrite(path: file, reason: "\(error)")
        }
    }

    /// Appends `segment` to the file beside the snapshot.
    static func append(beside snapshot: String, _ segment: Segment) throws(SnapshotError) {
        let file = path(beside: snapshot)
        do {
            var data = try JSONEncoder().encode(segment)
            data.append(UInt8(ascii: "\n"))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: data)
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
        let stale = { () -> String? in
            try? FileManager.default.removeItem(atPath: SnapshotChanges.path(beside: path))
            return nil
        }
        var count = 0
        let ends = SnapshotChanges.ends(beside: path).flatMap { $0.before == .init(at) ? $0 : nil }
        if let ends {
            guard ends.after.changeSequence == before else { return stale() }
            count = ends.count
        } else {
            guard at == before else { return stale() }
        }
        count += changes.count
        if count <= limit {
            let segment = SnapshotChanges.Segment(after: .init(after), count: count, changes: changes.map(SnapshotChanges.Change.init))
            if ends == nil {
                try SnapshotChanges.start(beside: path, before: .init(at), segment)
            } else {
                try SnapshotChanges.append(beside: path, segment)
            }
            return "\(count) changed records kept beside it"
        }
        guard var state = try? EngineState.readSnapshot(from: path, expecting: at) else { return stale() }
        var kept = SnapshotChanges(before: .init(at), after: .init(at), changes: [])
        if ends != nil {
            guard let read = SnapshotChanges.read(beside: path), read.after.changeSequence == before else { return stale() }
            kept = read
        }
        kept.changes += changes.map(SnapshotChanges.Change.init)
        kept.after = .init(after)
        kept.apply(to: &state)
        _ = try state.writeSnapshot(to: path)
        try? FileManager.default.removeItem(atPath: SnapshotChanges.path(beside: path))
        return "written again with \(count) changed records"
    }
}
