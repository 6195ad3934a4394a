import Foundation
import Gazetteer
import GeoCore
import Records
import SnapshotFile
import Synchronization

/// A pin as a client submits it (create or update).
public struct PinInput: Sendable {
    public var uniqueKey: String
    public var firstName: String
    public var lastName: String
    public var mapString: String
    public var mediaURL: String
    public var latitude: Double
    public var longitude: Double

    public init(uniqueKey: String, firstName: String, lastName: String, mapString: String, mediaURL: String, latitude: Double, longitude: Double) {
        self.uniqueKey = uniqueKey
        self.firstName = firstName
        self.lastName = lastName
        self.mapString = mapString
        self.mediaURL = mediaURL
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The pin these fields make, with the server's id, timestamps and owner.
    func record(id: String, createdAt: String, updatedAt: String, owner: String?) -> PinRecord {
        PinRecord(
            id: id,
            uniqueKey: uniqueKey,
            firstName: firstName,
            lastName: lastName,
            mapString: mapString,
            mediaURL: mediaURL,
            lat: latitude,
            lon: longitude,
            createdAt: createdAt,
            updatedAt: updatedAt,
            owner: owner
        )
    }

    /// Checks what the indexes need: a valid position. The fields' rules are the wire layer's (`PinRules` in API).
    public func validate() throws(SearchError) {
        do { _ = try Coordinate(latitude: latitude, longitude: longitude) } catch { throw SearchError.from(error) }
    }
}

/// A pin's text fields, for equality filters (the On the Map API's `where`).
public enum PinField: String, Sendable, CaseIterable {
    case objectId, uniqueKey, firstName, lastName, mapString, mediaURL

    public func value(of pin: PinRecord) -> String {
        switch self {
        case .objectId: return pin.id
        case .uniqueKey: return pin.uniqueKey
        case .firstName: return pin.firstName
        case .lastName: return pin.lastName
        case .mapString: return pin.mapString
        case .mediaURL: return pin.mediaURL
        }
    }
}

/// Sort orders of the pin list.
public enum PinOrder: String, Sendable, CaseIterable {
    case updatedAtDescending = "-updatedAt"
    case updatedAtAscending = "updatedAt"
    case createdAtDescending = "-createdAt"
    case createdAtAscending = "createdAt"
}

extension SearchEngine {
    /// A write's checks, in the one order of writes (see the type's comment). Over a shared store the state first
    /// catches up with the store, so that a write's checks (does this pin exist, was this POI created) see what other
    /// replicas committed — a client whose requests a load balancer spreads over replicas can create a record through
    /// one and delete it through another.
    ///
    /// A replica that cannot reach the store refuses writes at once (503) instead of sending each to wait out its
    /// deadlines: while the follower's last attempt failed (it tries again every poll interval, and writes resume
    /// with its first success), or when this write's own catch-up fails.
    private func ordered<T>(_ body: () throws(SearchError) -> T) throws(SearchError) -> T {
        writer.lock()
        defer { writer.unlock() }
        if let replication {
            let status = replication.current
            if !status.connected && replication.following { throw .unavailable(status.lastError ?? "the store is unreachable") }
            if let failure = catchUpHoldingWriter(), case .unavailable = failure { throw SearchError.from(failure) }
        }
        return try body()
    }

    /// A write of records, committed with the others waiting beside it (docs/ARCHITECTURE.md, "The walk of a
    /// write"): `body` makes the write's checks, in write order, against the state with the waiting writes laid over
    /// it (`current`, `pinCountWithWaiting`) and answers its changes; the write then waits for the commit that takes
    /// it. The first write to find no commit running leads one: it commits every write waiting then, its own among
    /// them, in one store transaction, while the writes behind it make their checks and queue for the next.
    /// - Returns: what `body` answered, once the changes are durable and visible.
    func submit<T>(_ body: () throws(SearchError) -> (changes: [StoreChange], answer: T)) throws(SearchError) -> T {
        let (ticket, answer) = try ordered { () throws(SearchError) in
            let (changes, answer) = try body()
            return (pending.add(changes), answer)
        }
        committer.lock()
        defer { committer.unlock() }
        if ticket.outcome == nil { commitWaiting() }
        if case .failure(let error)? = ticket.outcome { throw error }
        return answer
    }

    /// A write that has the store to itself (an import, a change file): the waiting writes are committed first, and no
    /// other write is checked or committed until `body` returns.
    private func exclusively<T>(_ body: () throws(SearchError) -> T) throws(SearchError) -> T {
        committer.lock()
        defer { committer.unlock() }
        commitWaiting()
        return try ordered(body)
    }

    /// Commits every waiting write in one store transaction and applies them to the state; sets each one's outcome.
    /// Holding `committer`: the store's commit runs without `writer`, so that other writes make their checks
    /// meanwhile. A commit that fails fails its writes and every write queued behind them (their checks read its
    /// records); nothing of them reaches the state.
    func commitWaiting() {
        let (changes, tickets, made) = writer.withLock {
            let (changes, tickets) = pending.take()
            return (changes, tickets, sharedTransitions(of: changes))
        }
        guard let last = tickets.last else { return }
        var outcome = Result<Void, SearchError>.success(())
        do throws(SearchError) {
            let sequences = try storeCommit(changes)
            afterCommit?()
            writer.withLock {
                apply(committed: changes, sequences: sequences, made: made)
                pending.settle(through: last.number)
            }
        } catch {
            outcome = .failure(error)
            for behind in writer.withLock({ pending.abandon() }) { behind.outcome = outcome }
        }
        for ticket in tickets { ticket.outcome = outcome }
        snapshotIfDue()
    }

    /// What the changes do to each record, from the state before them (holding `writer`, before their commit), when
    /// the fence log is shared with other servers and has fences; nil otherwise (`apply(committed:)` then makes
    /// them). A record written twice in the changes goes from the first write to the second.
    func sharedTransitions(of changes: [StoreChange]) -> [RecordTransition]? {
        guard let fences, fences.shared != nil, !fences.isEmpty else { return nil }
        var written: [PendingWrites.Key: Hit.Record?] = [:]
        return read { state in
            changes.map { change in
                let (key, after): (PendingWrites.Key, Hit.Record?)
                switch change {
                case .put(.poi(let poi)): (key, after) = (.init(kind: .poi, id: poi.id), .poi(poi))
                case .put(.pin(let pin)): (key, after) = (.init(kind: .pin, id: pin.id), .pin(pin))
                case .delete(let kind, let id): (key, after) = (.init(kind: kind, id: id), nil)
                }
                let before = written[key] ?? state.record(key.kind, id: key.id)
                written[key] = .some(after)
                return RecordTransition(before: before, after: after)
            }
        }
    }

    /// How many writes wait for a commit (tests).
    var waitingWrites: Int { writer.withLock { pending.count } }

    /// A record as the next write's checks see it: as the waiting writes leave it, else as the state has it.
    /// Holding `writer`.
    func current(_ kind: RecordKind, id: String) -> Hit.Record? {
        if let waiting = pending.record(kind, id: id) { return waiting }
        return read { $0.record(kind, id: id) }
    }

    /// Commits `changes` to the store when there is one; answers the store's sequence before and after.
    private func storeCommit(_ changes: [StoreChange]) throws(SearchError) -> (before: ChangeSequence, after: ChangeSequence)? {
        guard let store else { return nil }
        do { return try store.commit(changes) } catch { throw SearchError.from(error) }
    }

    /// Commits a write to the store and applies it, for a caller holding `committer` and `writer` (`exclusively`).
    func commit(_ changes: [StoreChange]) throws(SearchError) {
        let made = sharedTransitions(of: changes)
        let sequences = try storeCommit(changes)
        afterCommit?()
        apply(committed: changes, sequences: sequences, made: made)
        snapshotIfDue()
    }

    /// Applies changes the store committed to the in-memory state, then stores their fence events; holding `writer`.
    ///
    /// A store owned by this process (SQLite): the state keeps the store's change sequence it stands at while every
    /// change reached it through this engine; when another process wrote to the store between two of ours, the
    /// sequence becomes unknown and no snapshot is written from this state (a snapshot must never claim changes it
    /// lacks). A shared store with a change feed (PostgreSQL): the write is applied at once (a client reads its own
    /// write) but the state's sequence stays where the feed left it; the follower then applies every change up to and
    /// past this one as the store has it, also under `writer`, so it never applies a value older than this write
    /// after it. A record the follower already brought to what this write leaves (it read the commit from the feed
    /// first) makes no fence event here: the follower's application made them.
    ///
    /// With a fence log other servers share, the events are this server's to make, from the transitions `made`
    /// before the commit (`sharedTransitions`): no follower makes them, and by now it may have applied the write.
    private func apply(
        committed changes: [StoreChange],
        sequences: (before: ChangeSequence, after: ChangeSequence)?,
        made: [RecordTransition]? = nil
    ) {
        let followed = store?.feed != nil
        let watching = made == nil && (fences.map { !$0.isEmpty } ?? false)
        var transitions: [RecordTransition] = []
        write { state in
            for change in changes {
                let before: Hit.Record?
                let after: Hit.Record?
                switch change {
                case .put(.poi(let poi)): (before, after) = (watching ? state.record(.poi, id: poi.id) : nil, .poi(poi))
                case .put(.pin(let pin)): (before, after) = (watching ? state.record(.pin, id: pin.id) : nil, .pin(pin))
                case .delete(let kind, let id): (before, after) = (watching ? state.record(kind, id: id) : nil, nil)
                }
                if let after { _ = state.put(after) } else if case .delete(let kind, let id) = change { _ = state.delete(kind, id: id) }
                if watching && !(followed && before == after) { transitions.append(RecordTransition(before: before, after: after)) }
            }
            if let sequences, !followed {
                let ours = state.sequence == sequences.before && sequences.after.sequence == sequences.before.sequence + 1
                state.sequence = ours ? sequences.after : nil
            }
        }
        // The writes are durable and visible; their fence events follow, in write order (`writer` is held). An event
        // store that fails loses those events, not the writes: it is counted.
        if let made { transitions = made }
        if !transitions.isEmpty, let fences {
            do { try fences.record(transitions, at: nextTimestamp()) } catch { fenceFailures.add(1, ordering: .relaxed) }
        }
    }

    /// Creates or replaces a POI: durable in the store first, then visible to queries.
    @discardableResult
    public func upsertPOI(_ poi: POIRecord) throws(SearchError) -> (record: POIRecord, created: Bool) {
        try SearchEngine.validate(poi)
        return try submit { () throws(SearchError) in
            ([.put(.poi(poi))], (poi, current(.poi, id: poi.id) == nil))
        }
    }

    /// A batch of a live import: durable in the store first (one transaction), then visible to queries — in the one
    /// order of all writes. Rows were validated by the importer's parser, as for `poi import`.
    public func applyImported(_ rows: [ImportedRecord]) throws(SearchError) {
        try exclusively { () throws(SearchError) in
            try commit(SearchEngine.inHilbertOrder(rows).map { .put($0) })
            // A batch is many changes at once: its houses are settled (and indexed with the rest at the next
            // geocoding) instead of lying in the layer every later write indexes again.
            write { $0.recordHouses.settle() }
        }
    }

    /// The rows of an import as they are written: a row whose id a later row of the batch has is dropped (the later
    /// row wins, as it would), and the rest are put in Hilbert-curve order of their positions, ties in the batch's
    /// order — the order a bulk load numbers records in, so that new records of a large import lie close together in
    /// the posting lists' blocks, and a server that imported a batch numbers its records as one that loads them.
    static func inHilbertOrder(_ rows: [ImportedRecord]) -> [ImportedRecord] {
        func facts(_ row: ImportedRecord) -> (key: String, latitude: Double, longitude: Double) {
            switch row {
            case .poi(let poi): return ("poi:" + poi.id, poi.lat, poi.lon)
            case .pin(let pin): return ("pin:" + pin.id, pin.lat, pin.lon)
            }
        }
        var last: [String: Int] = [:]
        last.reserveCapacity(rows.count)
        for (i, row) in rows.enumerated() { last[facts(row).key] = i }
        let kept = rows.indices.filter { last[facts(rows[$0]).key] == $0 }
        return HilbertCurve.order(kept.count) { k in
            let row = facts(rows[kept[k]])
            return (row.latitude, row.longitude)
        }
        .map { rows[kept[$0]] }
    }

    /// An OpenStreetMap import into the running server, written in the order `poi import` writes one
    /// (`OSMImporter.write`) so that what is written is let go before the next part is made: the mirror of the extract
    /// first; then its POIs put and the `osm-` POIs it no longer has deleted, in one transaction and in the one order
    /// of all writes; then the address index built, its addresses and streets stored, and the index replaced. The freed
    /// heap goes back to the system after each part (docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country
    /// scale).
    /// - Returns: the number of POIs removed.
    @discardableResult
    public func applyOSMImport(_ result: consuming OSMImport) throws(SearchError) -> Int {
        var result = consume result
        return try exclusively { () throws(SearchError) in
            if let store, store.keepsAddresses {
                do throws(CatalogError) { try result.writeMirror(to: store) } catch { throw SearchError.from(error) }
            }
            result.mirror = nil
            ResidentMemory.returnFreedHeap()
            let removed: Int
            do {
                let changes: [StoreChange]
                (changes, removed) = result.changes(replacing: read { $0.records.poiIDs(prefix: OSMImport.idPrefix) })
                result.pois = []
                try commit(changes)
            }
            ResidentMemory.returnFreedHeap()
            var index = AddressIndex(result.addresses.asStored)
            var generation = ""
            if let store, store.keepsAddresses {
                do throws(CatalogError) {
                    generation = try store.replaceAddresses(result.addresses)
                    // This server's own replacement: not to be loaded again when the feed shows it.
                    addressGenerationSeen.withLock { $0 = generation }
                } catch {
                    throw SearchError.from(error)
                }
                // The next start maps the new addresses instead of indexing them again.
                if let policy = snapshotPolicy { index = Self.keepSnapshot(of: index, at: policy.addressPath, generation: generation).index }
            }
            replaceImportedAddresses(AddressLayer(base: index, generation: generation))
            loadOSMStatus()
            return removed
        }
    }

    /// A change file over a shared store (`poi serve --store URL --replicate FEED --mirror FILE`): `apply` applies it to
    /// the extract's working copy and writes what it makes to the store given it (`OSMImporter.apply(…alsoTo:)`);
    /// this server then takes it from the store's change feed at once, as its replicas do when they next look.
    public func applySharedOSMChange(_ apply: (any StoreOfRecord) throws -> OSMChangeResult) throws(SearchError) -> OSMChangeResult {
        guard let store, followsStore else {
            throw .invalid(parameter: "store", rule: "is not a shared store (a SQLite database applies change files itself)")
        }
        let result: OSMChangeResult
        do { result = try apply(store) } catch { throw .storage("\(error)") }
        catchUp()
        updateOSMStatus { status in
            if let timestamp = result.report.timestamp { status.timestamp = timestamp }
            if let sequence = result.report.sequence { status.sequence = sequence }
        }
        return result
    }

    /// Applies an OpenStreetMap change file: `apply` runs the store's one transaction (the mirror, POIs and addresses:
    /// `OSMImporter.apply`), then its POIs reach the in-memory state and what it made is laid over the address index
    /// (`AddressLayer`; the whole index built again when the layer outgrows `AddressLayer.limit`) and swapped in
    /// whole — a read sees the data before the change or after it, never half. `apply` is given a function to pass
    /// `OSMImporter.apply`'s `addressesMade`: the layer is then laid on another thread while the transaction writes
    /// the file (`AddressLayerAhead`), and swapped in only after it has committed.
    /// - Throws: `.invalid(parameter: "store")` when the store keeps no OpenStreetMap import (PostgreSQL); what `apply`
    ///   throws, as a storage error.
    public func applyOSMChange(
        _ apply: (any StoreOfRecord, _ addressesMade: @escaping (OSMChangeResult) -> Void) throws -> OSMChangeResult
    ) throws(SearchError) -> OSMChangeResult {
        try exclusively { () throws(SearchError) in
            guard let store, store.appliesOSMChanges else {
                throw .invalid(parameter: "store", rule: "keeps no OpenStreetMap import to apply change files to (only a SQLite database does)")
            }
            let result: OSMChangeResult
            let current = addresses.osm
            let ahead = Mutex<AddressLayerAhead?>(nil)
            do {
                result = try apply(store) { early in ahead.withLock { $0 = AddressLayerAhead(over: current, early) } }
            } catch {
                throw .storage("\(error)")
            }
            afterCommit?()
            self.apply(committed: result.changes, sequences: result.sequences)
            do throws(CatalogError) {
                replaceImportedAddresses(
                    try Self.layAddresses(
                        of: result,
                        over: addresses.osm,
                        snapshot: snapshotPolicy?.addressPath,
                        store: store,
                        rebuild: addressRebuild,
                        ahead: ahead.withLock { $0 }
                    )
                )
            } catch {
                throw SearchError.from(error)
            }
            snapshotIfDue()
            updateOSMStatus { status in
                if let timestamp = result.report.timestamp { status.timestamp = timestamp }
                if let sequence = result.report.sequence { status.sequence = sequence }
            }
            return result
        }
    }

    /// Begins building the whole address index again in the background when the change files laid over it have
    /// grown past `AddressRebuild.trigger` (`AddressRebuild.beginIfDue`): called by a feed's follower once it has
    /// applied every file there is, so that the build takes the time until the next.
    /// - Returns: whether a build was begun.
    @discardableResult public func beginAddressBuildIfDue() -> Bool {
        (try? exclusively { () throws(SearchError) in addressRebuild.beginIfDue(over: addresses.osm, snapshot: snapshotPolicy?.addressPath) })
            ?? false
    }

    /// Deletes a POI. - Throws: `.notFound` when there is none.
    public func deletePOI(id: String) throws(SearchError) {
        try submit { () throws(SearchError) in
            guard current(.poi, id: id) != nil else { throw .notFound(kind: "poi", id: id) }
            return ([.delete(.poi, id: id)], ())
        }
    }

    static func validate(_ poi: POIRecord) throws(SearchError) {
        guard !poi.id.isEmpty, poi.id.unicodeScalars.count <= 200 else { throw .invalid(parameter: "id", rule: "must be 1 to 200 characters") }
        guard !poi.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, poi.name.unicodeScalars.count <= 200 else {
            throw .invalid(parameter: "name", rule: "must be 1 to 200 characters, not all spaces")
        }
        for (name, value) in [("name", poi.name), ("address", poi.address ?? ""), ("city", poi.city ?? "")]
        where value.containsControlCharacter {
            throw .invalid(parameter: name, rule: "must not contain control characters")
        }
        guard CategoryPath.normalized(poi.category) == poi.category else {
            throw .invalid(parameter: "category", rule: "must be a lowercase dot path such as food.cafe")
        }
        for (name, value) in [("address", poi.address), ("city", poi.city)] where (value?.unicodeScalars.count ?? 0) > 500 {
            throw .invalid(parameter: name, rule: "must be at most 500 characters")
        }
        if let country = poi.country, !(country.count == 2 && country.allSatisfy { $0.isASCII && $0.isUppercase }) {
            throw .invalid(parameter: "country", rule: "must be an ISO 3166-1 alpha-2 code in capitals such as FI")
        }
        do { _ = try Coordinate(latitude: poi.lat, longitude: poi.lon) } catch { throw SearchError.from(error) }
    }

    /// Creates a pin with a new id and server timestamps, owned by `owner` (a user's token `sub`) when given.
    /// - Parameter maximumPerOwner: an owner with this many pins already is refused (`.quota`); counted in the same
    ///   ordered section as the write, so concurrent creates cannot pass it.
    public func createPin(_ input: PinInput, owner: String? = nil, maximumPerOwner: Int? = nil) throws(SearchError) -> PinRecord {
        try input.validate()
        let id = "p_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try submit { () throws(SearchError) in
            if let owner, let maximumPerOwner, pinCountWithWaiting(owner: owner) >= maximumPerOwner {
                throw .quota("you have \(maximumPerOwner) pins, the most one user may have here: delete or move one instead")
            }
            let now = nextTimestamp()
            let pin = input.record(id: id, createdAt: now, updatedAt: now, owner: owner)
            return ([.put(.pin(pin))], pin)
        }
    }

    /// Replaces a pin's fields, keeping its id and createdAt. - Throws: `.notFound` when there is none.
    public func updatePin(id: String, _ input: PinInput) throws(SearchError) -> PinRecord {
        try input.validate()
        return try submit { () throws(SearchError) in
            guard case .pin(let old)? = current(.pin, id: id) else { throw .notFound(kind: "pin", id: id) }
            let now = nextTimestamp()
            let pin = input.record(id: id, createdAt: old.createdAt, updatedAt: now, owner: old.owner)
            return ([.put(.pin(pin))], pin)
        }
    }

    /// Whose pins a list holds.
    public enum PinOwner: Sendable, Equatable {
        /// The pins a user placed (their token's `sub`).
        case user(String)
        /// The pins no user owns: placed by keys, by an open server's writers, or before ownership was recorded.
        case nobody
    }

    /// How many pins `owner` has placed.
    public func pinCount(owner: String) -> Int {
        read { s in
            s.pinNumbers.values.reduce(0) { count, number in
                guard case .pin(let pin) = s.record(Int(number)), pin.owner == owner else { return count }
                return count + 1
            }
        }
    }

    /// How many pins `owner` has placed, the waiting writes' among them (a write's quota check; holding `writer`).
    func pinCountWithWaiting(owner: String) -> Int {
        pending.records(.pin).reduce(pinCount(owner: owner)) { count, waiting in
            func owned(_ record: Hit.Record?) -> Int { if case .pin(let pin)? = record, pin.owner == owner { 1 } else { 0 } }
            return count - owned(read { $0.record(.pin, id: waiting.id) }) + owned(waiting.record)
        }
    }

    public func deletePin(id: String) throws(SearchError) {
        try submit { () throws(SearchError) in
            guard current(.pin, id: id) != nil else { throw .notFound(kind: "pin", id: id) }
            return ([.delete(.pin, id: id)], ())
        }
    }

    /// Pins in the given order (ties by id), optionally only one user's (by `uniqueKey`, or by `owner`: the pins a
    /// token's user placed), paged by skip/limit.
    /// (`limit` and `skip` are validated by the wire layer; a negative one counts as 0.)
    public func pins(
        limit: Int,
        skip: Int,
        order: PinOrder = .updatedAtDescending,
        uniqueKey: String? = nil,
        owner: PinOwner? = nil,
        equal: [(PinField, String)] = []
    ) -> (results: [PinRecord], total: Int) {
        let all: [PinRecord] = read { s in
            s.pinNumbers.values.compactMap { number -> PinRecord? in
                guard case .pin(let pin) = s.record(Int(number)) else { return nil }
                return pin
            }
        }
        var selected = all.filter { pin in
            guard uniqueKey == nil || pin.uniqueKey == uniqueKey else { return false }
            guard equal.allSatisfy({ field, value in field.value(of: pin) == value }) else { return false }
            switch owner {
            case nil: return true
            case .user(let subject)?: return pin.owner == subject
            case .nobody?: return pin.owner == nil
            }
        }
        selected.sort { a, b in
            switch order {
            case .updatedAtDescending: return a.updatedAt != b.updatedAt ? a.updatedAt > b.updatedAt : a.id < b.id
            case .updatedAtAscending: return a.updatedAt != b.updatedAt ? a.updatedAt < b.updatedAt : a.id < b.id
            case .createdAtDescending: return a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id < b.id
            case .createdAtAscending: return a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.id < b.id
            }
        }
        return (Array(selected.dropFirst(max(0, skip)).prefix(max(0, limit))), selected.count)
    }
}

extension SearchEngine {
    /// Server timestamps strictly increase, one millisecond apart at least, so "newest first" has no ties between
    /// writes made in the same millisecond (and survives a clock stepping back).
    func nextTimestamp() -> String {
        clock.withLock { last in
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            let next = max(now, last + 1)
            last = next
            return Timestamp.string(milliseconds: next)
        }
    }
}
