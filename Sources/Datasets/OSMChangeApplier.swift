import Catalog
import Foundation
import GeoCore
import OSM
import Records

extension OSMImporter {
    /// Applies an osmChange file to a database an `.osm.pbf` import made, in one transaction: the mirror of the
    /// extract (`OSMMirror`), the POIs and the addresses change together or not at all.
    ///
    /// Each object the file names ends as its last action says. What is converted again: the nodes of the file, the
    /// ways of the file and those using a node of it, the relations of the file and those with one of those ways as
    /// a member — with the same conversion as an import (`Piece`), so the outcome equals a fresh import of the
    /// changed extract. Their POIs, houses and street lines replace the ones they made before.
    ///
    /// - Parameters:
    ///   - name: what errors call the file.
    ///   - sequence: the replication sequence the file brings the data to (stored beside the data).
    ///   - timestamp: the time of that sequence (its `state.txt`); without it, the file's newest object's.
    ///   - shared: a store the database's OpenStreetMap outputs are kept in as well (PostgreSQL, shared by several
    ///     servers; `copyOutputs`): the file's POI changes and the addresses after it are written there inside the
    ///     database's transaction, so that when they fail the database does not change either. Should the database's
    ///     own commit fail after them, applying the file again writes the same final states again.
    ///   - addressesMade: called inside the transaction once the file's addresses are made and before they are
    ///     written, with what the address index's layer takes (`changedObjects`, `made`, `sea`, `addressGeneration`:
    ///     the result's own, which the store's commit then makes true): a caller lays them over its index meanwhile
    ///     (`AddressLayerAhead`), on another core, and uses that layer only once the transaction has committed.
    /// - Throws: `OSMChangeError` for a modify or delete of an object the database does not have, a file older than
    ///   the data, or a database without an OpenStreetMap import; `CatalogError` for the store.
    public func apply(
        _ change: OSMChange,
        name: String,
        to store: any StoreOfRecord,
        sequence: Int? = nil,
        timestamp: String? = nil,
        source: String? = nil,
        alsoTo shared: (any StoreOfRecord)? = nil,
        addressesMade: ((OSMChangeResult) -> Void)? = nil
    ) throws -> OSMChangeResult {
        // Only a SQLite database keeps the mirror a change file is applied to.
        guard let store = store as? CatalogStore else {
            throw CatalogError.storage("\(store.location) keeps no OpenStreetMap import to apply change files to (only a SQLite database does)")
        }
        let started = Date()
        let (value, before, after) = try store.updateOSM { mirror in
            var run = ChangeRun(importer: self, change: change, name: name, mirror: mirror)
            run.returnsAllAddresses = shared != nil
            run.addressesMade = addressesMade
            let result = try run.run(sequence, timestamp, source)
            if let shared {
                if !result.changes.isEmpty { try shared.commit(result.changes) }
                guard let addresses = result.addresses else { preconditionFailure("the run was asked for every address") }
                // With the sequence and time the file brings the data to, for the replicas' /health.
                _ = try shared.replaceAddresses(addresses, osm: try mirror.state())
            }
            return result
        }
        var result = value
        result.sequences = (before, after)
        result.report.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// Writes what OpenStreetMap imports made in `database` — its `osm-…` POIs, houses, street lines and map areas — to
    /// `shared`, a store that keeps no mirror of its own (PostgreSQL): POIs put in blocks, the store's OSM POIs the
    /// database lacks deleted, the addresses replaced. The database is then the extract's working copy that change
    /// files are applied to (`apply(_:name:to:…:alsoTo:)`), and the shared store holds what they make.
    /// - Returns: how many POIs were put and removed.
    public static func copyOutputs(of database: CatalogStore, to shared: any StoreOfRecord) throws(CatalogError) -> (put: Int, removed: Int) {
        var put = 0
        var kept = Set<String>()
        var failure: CatalogError?
        _ = try database.loadAll(blockSize: 10_000) { block in
            let pois = block.filter { $0.id.hasPrefix(OSMImport.idPrefix) }
            guard failure == nil, !pois.isEmpty else { return }
            do throws(CatalogError) { try shared.commit(pois.map { .put(.poi($0)) }) } catch { failure = error }
            for poi in pois { kept.insert(poi.id) }
            put += pois.count
        }
        if let failure { throw failure }
        let stale = try shared.poiIDs(prefix: OSMImport.idPrefix).filter { !kept.contains($0) }
        for start in stride(from: 0, to: stale.count, by: 10_000) {
            try shared.commit(stale[start..<min(start + 10_000, stale.count)].map { .delete(.poi, id: $0) })
        }
        _ = try shared.replaceAddresses(try database.loadAddresses(), osm: try database.osmMirrorState())
        return (put, stale.count)
    }

    /// One application, inside the store's write transaction.
    struct ChangeRun {
        let importer: OSMImporter
        let change: OSMChange
        let name: String
        let mirror: OSMMirror
        /// The final state of each object the file names (nil inside: deleted).
        var nodes: [Int64: OSMNode?] = [:]
        var ways: [Int64: OSMWay?] = [:]
        var relations: [Int64: OSMRelation?] = [:]
        /// Whether the result carries every house, line and area after the file (for a shared store).
        var returnsAllAddresses = false
        /// Told what the file's addresses are before they are written (`apply(…addressesMade:)`).
        var addressesMade: ((OSMChangeResult) -> Void)?

        init(importer: OSMImporter, change: OSMChange, name: String, mirror: OSMMirror) {
            (self.importer, self.change, self.name, self.mirror) = (importer, change, name, mirror)
        }

        func fail(_ line: Int?, _ reason: String) -> OSMChangeError { OSMChangeError(file: name, line: line, reason: reason) }

        mutating func run(_ sequence: Int?, _ timestamp: String?, _ source: String?) throws -> OSMChangeResult {
            guard var state = try mirror.state() else {
                throw fail(
                    nil,
                    "the database holds no OpenStreetMap import to apply changes to (import the extract's .osm.pbf into it first, without --no-updates)"
                )
            }
            // A file from a feed is placed by its sequence (`Replicator`); a file on its own, by its objects' times.
            if sequence == nil, let newest = change.newestTimestamp, let data = state.timestamp, Self.instant(newest) < Self.instant(data) {
                throw fail(
                    nil,
                    "every object of the file is older than the data (newest \(newest), the data \(data)): it was applied already or belongs before"
                )
            }
            try readFinalStates()
            var report = OSMChangeReport()
            report.nodes = nodes.count
            report.ways = ways.count
            report.relations = relations.count

            // What the file changes, and what is built from it.
            var affectedWays = Set(ways.keys)
            for id in nodes.keys { if let node = try mirror.node(id) { affectedWays.formUnion(node.ways) } }
            var oldWayRefs: [Int64: [Int64]] = [:]
            for id in ways.keys { if let old = try mirror.way(id) { oldWayRefs[id] = old.refs } }
            var affectedRelations = Set(relations.keys)
            for id in affectedWays { affectedRelations.formUnion(try mirror.relations(using: id)) }
            // The sea is made again from every coastline way when the file touches one (or makes one).
            let remakesSea =
                !affectedWays.isDisjoint(with: try mirror.coastlineWays())
                || ways.values.contains { $0?.tags["natural"] == "coastline" }

            // The mirror as the file leaves it: nodes, then relations (which ways are members), then ways.
            for (id, node) in nodes {
                if let node {
                    let number = node.tags["addr:housenumber"].flatMap(OSMImporter.leadingNumber).map { Int32(clamping: $0) } ?? -1
                    try mirror.setNode(
                        id,
                        latitude: NodeLocationStore.fixed(node.latitude),
                        longitude: NodeLocationStore.fixed(node.longitude),
                        number: number
                    )
                } else {
                    try mirror.deleteNode(id)
                }
            }
            for (id, relation) in relations {
                guard let relation else {
                    try mirror.deleteRelation(id)
                    continue
                }
                if relation.tags["type"] == "multipolygon" && importer.hasOutput(relation: relation.tags) {
                    try mirror.putRelation(id, members: relation.members, tags: relation.tags)
                } else {
                    try mirror.putRelation(id, members: nil, tags: nil)
                }
            }
            for (id, way) in ways {
                if let old = oldWayRefs[id] { try mirror.removeWay(id, from: old) }
                try mirror.setCoastline(id, way?.tags["natural"] == "coastline")
                guard let way else {
                    try mirror.deleteWay(id)
                    continue
                }
                let output = importer.hasOutput(way: way.tags)
                try mirror.putWay(id, refs: way.refs, tags: output ? way.tags : nil)
                let member = !(try mirror.relations(using: id)).isEmpty
                if output || member { try mirror.addWay(id, to: way.refs) }
            }
            // Members of the multipolygons of the file: their nodes now lead to them.
            for case let (_, relation?) in relations where relation.tags["type"] == "multipolygon" && importer.hasOutput(relation: relation.tags) {
                for member in relation.members where member.type == .way && ways[member.ref] == nil {
                    if let refs = try mirror.way(member.ref)?.refs { try mirror.addWay(member.ref, to: refs) }
                }
            }

            // Everything affected, converted again from the mirror as it is now.
            var wayObjects: [OSMWay] = []
            var relationObjects: [OSMRelation] = []
            var memberWays = WayTable()
            var neededNodes = Set<Int64>()
            for id in affectedWays.sorted() {
                let way: OSMWay?
                if let final = ways[id] {
                    way = final
                } else if let stored = try mirror.way(id), let tags = stored.tags {
                    way = OSMWay(id: id, refs: stored.refs, tags: tags)
                } else {
                    way = nil
                }
                guard let way, !way.tags.isEmpty else { continue }
                wayObjects.append(way)
                neededNodes.formUnion(way.refs)
            }
            for id in affectedRelations.sorted() {
                let relation: OSMRelation?
                if let final = relations[id] {
                    relation = final
                } else if let stored = try mirror.relation(id), let members = stored.members, let tags = stored.tags {
                    relation = OSMRelation(id: id, members: members, tags: tags)
                } else {
                    relation = nil
                }
                guard let relation, relation.tags["type"] == "multipolygon", importer.hasOutput(relation: relation.tags) else { continue }
                relationObjects.append(relation)
                for member in relation.members where member.type == .way {
                    let refs: [Int64]?
                    if let final = ways[member.ref] { refs = final?.refs } else { refs = try mirror.way(member.ref)?.refs }
                    guard let refs else { continue }
                    memberWays.append(member.ref, refs)
                    neededNodes.formUnion(refs)
                }
            }
            memberWays.finish()
            var run = NodeLocationStore.Run()
            var numberIDs: [Int64] = []
            var numberValues: [Int] = []
            for id in neededNodes.sorted() {
                guard let node = try mirror.node(id) else { continue }
                run.append(id: id, latitude: node.latitude, longitude: node.longitude)
                if node.number >= 0 {
                    numberIDs.append(id)
                    numberValues.append(Int(node.number))
                }
            }
            var locations = NodeLocationStore()
            locations.append(run)
            locations.finish()
            let frozen = FrozenNodes(store: locations, numberIDs: numberIDs, numberValues: numberValues)
            var piece = Piece(importer: importer, file: name, offset: 0, nodes: frozen)
            for (id, node) in nodes.sorted(by: { $0.key < $1.key }) {
                guard let node, !node.tags.isEmpty else { continue }
                let at: AreaGeometry.Point = (
                    Double(NodeLocationStore.fixed(node.latitude)) / 1e7, Double(NodeLocationStore.fixed(node.longitude)) / 1e7
                )
                do { try piece.place(OSMImporter.objectID("osm-n", id), node.tags, at: at) } catch { throw fail(nil, "\(error)") }
            }
            do {
                for way in wayObjects { try piece.take(way) }
                for relation in relationObjects { try piece.take(relation, ways: memberWays) }
            } catch {
                throw fail(nil, "\(error)")
            }
            var gathered = State(importer: importer, file: name)
            gathered.add(piece.result, unlocated: piece.unlocated)
            do { try gathered.locateUnlocated() } catch { throw fail(nil, "\(error)") }
            let made = gathered.result

            // The outputs of every affected object replaced by what they make now.
            var objects = Set<String>()
            for id in nodes.keys { objects.insert(OSMImporter.objectID("osm-n", id)) }
            for id in affectedWays { objects.insert(OSMImporter.objectID("osm-w", id)) }
            for id in affectedRelations { objects.insert(OSMImporter.objectID("osm-r", id)) }
            report.rebuilt = affectedWays.count + affectedRelations.count - ways.count - relations.count
            var changes: [StoreChange] = []
            let kept = Set(made.pois.map(\.id))
            for id in objects.sorted() where !kept.contains(id) {
                guard try mirror.hasPOI(id) else { continue }
                changes.append(.delete(.poi, id: id))
                report.poisRemoved += 1
            }
            for poi in made.pois { changes.append(.put(.poi(poi))) }
            report.poisPut = made.pois.count
            try mirror.commit(changes)
            var added = made.addresses
            added.addresses = OSMObjectKey.inOrder(added.addresses)
            added.streets = OSMObjectKey.inOrder(added.streets, id: \.id)
            added.areas = OSMObjectKey.inOrder(added.areas)
            var sea: [MapArea]?
            if remakesSea, let box = state.box {
                let made = OSMImporter.sea(try coastline(), box: box)
                sea = made.areas
                report.problems.add(contentsOf: made.problems.map { ImportProblem(file: name, line: 0, reason: $0) })
            }
            let generation = UUID().uuidString
            if let addressesMade {
                var early = OSMChangeResult()
                (early.changedObjects, early.made, early.sea, early.addressGeneration) = (objects, added, sea, generation)
                addressesMade(early)
            }
            let (addresses, _, houseBlocks) = try mirror.replaceAddresses(
                of: objects,
                with: added,
                sea: sea,
                generation: generation,
                returningAll: returnsAllAddresses
            )
            report.houseBlocks = houseBlocks
            report.houses = added.addresses.count
            report.streets = added.streets.count
            var problems = made.report.problems
            problems.add(report.problems)
            report.problems = problems

            if let newest = timestamp ?? change.newestTimestamp, state.timestamp.map({ Self.instant($0) < Self.instant(newest) }) ?? true {
                state.timestamp = newest
            }
            if let sequence { state.sequence = sequence }
            if let source { state.source = source }
            try mirror.setState(state)
            report.timestamp = state.timestamp
            report.sequence = state.sequence
            var result = OSMChangeResult()
            (result.changes, result.addresses, result.addressGeneration, result.report) = (changes, addresses, generation, report)
            (result.changedObjects, result.made, result.sea) = (objects, added, sea)
            return result
        }

        /// The stretches of the coastline ways whose nodes the data has, from the mirror as the file leaves it, in
        /// way order (as an import reads them).
        func coastline() throws -> [Coastline.Piece] {
            var pieces: [Coastline.Piece] = []
            for id in try mirror.coastlineWays() {
                guard let refs = try mirror.way(id)?.refs else { continue }
                pieces += try Coastline.Piece.stretches(of: refs) { ref in
                    try mirror.node(ref).map { (Double($0.latitude) / 1e7, Double($0.longitude) / 1e7) }
                }
            }
            return pieces
        }

        /// Each object's last action, checking that a modify or delete names an object the data has.
        mutating func readFinalStates() throws {
            for entry in change.entries {
                switch entry.object {
                case .node(let node):
                    let exists = try nodes[node.id].map { $0 != nil } ?? (mirror.node(node.id) != nil)
                    try check(entry, exists: exists)
                    nodes[node.id] = .some(entry.action == .delete ? nil : node)
                case .way(let way):
                    let exists = try ways[way.id].map { $0 != nil } ?? (mirror.way(way.id) != nil)
                    try check(entry, exists: exists)
                    ways[way.id] = .some(entry.action == .delete ? nil : way)
                case .relation(let relation):
                    let exists = try relations[relation.id].map { $0 != nil } ?? (mirror.relation(relation.id) != nil)
                    try check(entry, exists: exists)
                    relations[relation.id] = .some(entry.action == .delete ? nil : relation)
                }
            }
        }

        func check(_ entry: OSMChange.Entry, exists: Bool) throws {
            guard entry.action != .create, !exists else { return }
            throw fail(
                entry.line,
                "\(entry.action.rawValue) of \(entry.object.name), which the data does not have (is the file for another extract, or applied out of order?)"
            )
        }

        /// An OSM timestamp as seconds, for comparing ("2024-05-01T12:00:00Z"); text that is not one compares as 0.
        static func instant(_ text: String) -> Double {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.date(from: text)?.timeIntervalSince1970 ?? 0
        }
    }

    /// Whether a way with these tags makes a POI, a house, a street, an interpolation line or a map area (`Piece.take(_:)`).
    func hasOutput(way tags: [OSMTag]) -> Bool {
        let highway = tags["highway"]
        return (tags["name"] != nil && mapping.category({ tags[$0] }) != nil) || tags["addr:housenumber"] != nil
            || (highway != nil && !OSMImporter.notStreets.contains(highway!) && tags["name"] != nil) || tags["addr:interpolation"] != nil
            || MapArea.kind({ tags[$0] }) != nil || tags["natural"] == "coastline"
    }
}
