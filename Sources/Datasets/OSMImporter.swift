import Catalog
import Foundation
import Gazetteer
import GeoCore
import OSM
import Parallelism
import Records
import SnapshotFile

/// Reads an `.osm.pbf` extract into POIs, addresses and streets.
///
/// - POIs: named nodes, ways and multipolygon relations with a mapped tag (`OSMTagMapping`, from
///   data/categories.json); a way or relation is placed at a point inside its area (`AreaGeometry.interiorPoint`),
///   not at a centroid that can fall in a courtyard. Ids are `osm-n…`, `osm-w…`, `osm-r…`, so a re-import updates
///   in place; what an earlier import had and this extract lacks is removed when the result is written.
/// - Addresses: every object with `addr:housenumber` and `addr:street` or `addr:place` (a list "1;3" gives one per
///   number), with postcode, city and unit.
/// - Streets: named `highway` ways with their name variants, and `addr:interpolation` lines with the numbers at
///   their ends.
///
/// One pass over the file, on every core: `ParallelBlockReader`'s threads decode blocks and turn their nodes and
/// ways into POIs, addresses and streets (`Piece`); the reading thread gathers the pieces in file order (`State`): node
/// locations into a packed `NodeLocationStore` (5–6 bytes a node) until the first block of ways, which waits for them,
/// way node lists into a packed `WayTable` for relations, which it converts itself. Memory grows with those two tables
/// and with what the file makes (see docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale). An
/// object that refers to a node or way the file lacks is reported with its id and imported from what is there (a
/// clipped extract); under `strict` the first such problem, in file order, stops the import before anything is written.
public struct OSMImporter: Sendable {
    public let mapping: OSMTagMapping
    public var strict = false
    /// Whether the import keeps the extract's objects for change files (`OSMImport.mirror`); `poi import --no-updates`
    /// leaves them out, as Nominatim's `--no-updates` does: a faster import of data that is never updated.
    public var keepsMirror = true
    /// City and country of a point (the gazetteer's reverse geocoding) for POIs whose tags do not say; asked once
    /// the extract is read (so the gazetteer may still be loading while it is).
    public var locate: (@Sendable (Double, Double) throws -> (city: String?, country: String?))?

    public init(
        mapping: OSMTagMapping,
        strict: Bool = false,
        locate: (@Sendable (Double, Double) throws -> (city: String?, country: String?))? = nil
    ) {
        self.mapping = mapping
        self.strict = strict
        self.locate = locate
    }

    /// An importer with the bundled category mapping, placing objects in cities and countries with the bundled
    /// gazetteer, both from `dataDirectory`.
    /// - Parameter gazetteerSnapshot: the database's gazetteer snapshot: read when it is there, else the gazetteer is
    ///   built whole and the snapshot written, so that the first `poi serve` after the import maps it (nil: the
    ///   reverse-geocoding part only, in half the time).
    public static func bundled(dataDirectory: String, gazetteerSnapshot: String? = nil, strict: Bool = false) throws -> OSMImporter {
        let mapping = try OSMTagMapping.load(directory: dataDirectory)
        // Loaded on a thread of its own while the extract is read (half a second, an eighth of a country's import).
        let gazetteer = Background {
            if let gazetteerSnapshot { return try Gazetteer.load(directory: dataDirectory, snapshot: gazetteerSnapshot).gazetteer }
            return try Gazetteer.loadForReverse(directory: dataDirectory)
        }
        return OSMImporter(mapping: mapping, strict: strict) { try gazetteer.value().cityAndCountry(latitude: $0, longitude: $1) }
    }

    /// The importer of the bundled tag mapping, placing POIs in cities with a gazetteer already loaded (a server's;
    /// nil: no cities), where `bundled(dataDirectory:strict:)` loads its own beside the read.
    public static func bundled(dataDirectory: String, gazetteer: Gazetteer?, strict: Bool = false) throws -> OSMImporter {
        OSMImporter(mapping: try OSMTagMapping.load(directory: dataDirectory), strict: strict) { latitude, longitude in
            gazetteer?.cityAndCountry(latitude: latitude, longitude: longitude) ?? (nil, nil)
        }
    }

    /// Whether a multipolygon with these tags makes a POI, a house or a map area (`Piece.take(_:ways:)`).
    func hasOutput(relation tags: [OSMTag]) -> Bool {
        (tags["name"] != nil && mapping.category({ tags[$0] }) != nil) || tags["addr:housenumber"] != nil || MapArea.kind({ tags[$0] }) != nil
    }

    /// A multipolygon's rings as a map area keeps them: each outer ring (its closing vertex dropped) followed by the
    /// inner rings that start inside it.
    static func rings(outer: [[AreaGeometry.Point]], inner: [[AreaGeometry.Point]]) -> [MapArea.Ring] {
        func ring(_ points: [AreaGeometry.Point], outer: Bool) -> MapArea.Ring {
            MapArea.Ring(outer: outer, points: points.dropLast().map { Coordinate2($0.latitude, $0.longitude) })
        }
        var holes = [[MapArea.Ring]](repeating: [], count: outer.count)
        for hole in inner where hole.count >= 4 {
            let k = outer.firstIndex { $0.count >= 4 && Coastline.contains(Array($0.dropLast()), hole[0]) } ?? 0
            holes[k].append(ring(hole, outer: false))
        }
        var rings: [MapArea.Ring] = []
        for (k, points) in outer.enumerated() where points.count >= 4 {
            rings.append(ring(points, outer: true))
            rings += holes[k]
        }
        return rings
    }

    /// The sea within the extract's box that its coastline bounds, as areas `osm-sea-1`, `osm-sea-2`, … (problems
    /// reported as the import's).
    static func sea(_ pieces: [Coastline.Piece], box: Coastline.Box) -> (areas: [MapArea], problems: [String]) {
        guard !pieces.isEmpty else { return ([], []) }
        let (polygons, problems) = Coastline.sea(pieces, box: box)
        let areas = polygons.enumerated().map { k, polygon in
            MapArea(
                id: MapArea.seaPrefix + String(k + 1),
                kind: .water,
                rings: polygon.enumerated().map { r, ring in
                    MapArea.Ring(outer: r == 0, points: ring.map { Coordinate2($0.latitude, $0.longitude) })
                }
            )
        }
        return (areas, problems)
    }

    static let nameKeys = ["name", "name:fi", "name:sv", "name:en", "name:zh", "alt_name", "old_name", "official_name", "short_name", "loc_name"]
    static let notStreets: Set<String> = [
        "bus_stop", "platform", "elevator", "street_lamp", "traffic_signals", "crossing", "proposed", "construction", "emergency_access_point",
    ]

    /// Reads the extract at `path` with `workers` threads converting blocks; problems name it `name`.
    public func read(
        _ path: String,
        name: String? = nil,
        workers: Int = OSMImporter.workers,
        progress: ((Int, Int) -> Void)? = nil
    ) throws(ImportError) -> OSMImport {
        let started = Date()
        let name = name ?? (path as NSString).lastPathComponent
        let file: PBFReader
        do { file = try PBFReader(path: path) } catch { throw .cannotRead("\(name): \(error.description)") }
        let gate = NodeGate()
        let importer = self
        let reader = ParallelBlockReader(file, workers: workers) { block in
            // A block of ways waits for every node's location: the blocks before it, gathered by `State.merge`. A block
            // that also has nodes (where a file's nodes end) leaves its ways to `State.merge`, which has them then.
            let waits = !block.ways.isEmpty && block.nodes.isEmpty
            var piece = Piece(importer: importer, file: name, offset: block.offset, nodes: waits ? try gate.wait() : nil)
            try piece.take(block)
            // The block's houses encoded here, on its thread: the reading thread appends the block as it is.
            piece.result.addresses.addresses.seal()
            return piece
        }
        defer {
            reader.stop()
            gate.cancel()
        }
        var state = State(importer: self, file: name)
        do {
            while let piece = try reader.next(waiting: { contents in if contents.ways > 0 && contents.nodes == 0 { state.freezeNodes(gate) } }) {
                try state.merge(piece, gate)
                progress?(reader.offset, reader.fileSize)
            }
        } catch let error as PBFError {
            throw .cannotRead("\(name): \(error.description)")
        } catch let error as ImportError {
            throw error
        } catch {
            throw .cannotRead("\(name): \(error)")
        }
        // In the order of their objects (as a sorted extract has them already): the order a change file keeps.
        state.result.addresses.addresses = OSMObjectKey.inOrder(state.result.addresses.addresses)
        state.result.addresses.streets = OSMObjectKey.inOrder(state.result.addresses.streets, id: \.id)
        state.result.addresses.areas = OSMObjectKey.inOrder(state.result.addresses.areas)
        try state.addSea(box: file.header.bbox)
        try state.locateUnlocated()
        if keepsMirror {
            state.result.mirror = state.mirror(timestamp: file.header.replicationTimestamp.map(OSMImporter.isoTimestamp))
            state.result.mirror?.state.sequence = file.header.replicationSequence.map { Int($0) }
            state.result.mirror?.state.source = file.header.replicationBaseURL
        }
        var result = state.result
        result.report.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// Seconds since 1970 as OSM writes times: "2024-05-01T12:00:00Z".
    static func isoTimestamp(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Threads that decode blocks and turn them into pieces of the import: one a core, up to 8.
    public static let workers = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)

    /// Writes an import to a store: the objects as read, for change files (`OSMImport.mirror`); then every POI put
    /// (created or updated by id) and the POIs of earlier OSM imports that the extract no longer has deleted, all in
    /// one transaction; then the addresses and streets replaced.
    ///
    /// The mirror goes first, and is let go once written: the node locations and way lists it holds (two fifths of a
    /// country's import) are freed before `mirrorWritten` is called, where `poi import` starts building the address
    /// index beside the rest of the writes (docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale).
    /// - Returns: the number of POIs removed, and the addresses' new generation (nil: the store keeps none).
    @discardableResult
    public static func write(
        _ result: consuming OSMImport,
        to store: any StoreOfRecord,
        mirrorWritten: (() -> Void)? = nil
    ) throws(CatalogError) -> (removed: Int, addressGeneration: String?) {
        try result.writeMirror(to: store)
        // What is let go goes back to the system, not only to this thread's heap: the address index is built on
        // another thread, whose allocations come from another of malloc's arenas.
        ResidentMemory.returnFreedHeap()
        mirrorWritten?()
        let removed: Int
        do {
            let changes: [StoreChange]
            (changes, removed) = result.changes(replacing: try store.poiIDs(prefix: OSMImport.idPrefix))
            result.pois = []
            try store.commit(changes)
        }
        ResidentMemory.returnFreedHeap()
        let generation = store.keepsAddresses ? try store.replaceAddresses(result.addresses) : nil
        return (removed, generation)
    }

    /// Every node's location and house number, complete once the nodes of the file are read; what ways are built
    /// from, shared by the threads that convert way blocks.
    final class FrozenNodes: Sendable {
        let store: NodeLocationStore
        /// House numbers of nodes, for the ends of interpolation lines: ids sorted, beside their numbers.
        let numberIDs: [Int64]
        let numberValues: [Int]

        init(store: NodeLocationStore, numberIDs: [Int64], numberValues: [Int]) {
            (self.store, self.numberIDs, self.numberValues) = (store, numberIDs, numberValues)
        }

        /// The house number of node `id`, if it has one.
        func number(of id: Int64) -> Int? {
            let i = numberIDs.lowerBound(of: id)
            return i < numberIDs.count && numberIDs[i] == id ? numberValues[i] : nil
        }
    }

    /// Where the threads converting way blocks wait for the nodes; cancelled when the read stops early.
    final class NodeGate: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var nodes: FrozenNodes?
        private var cancelled = false

        struct Cancelled: Error {}

        func open(_ frozen: FrozenNodes) {
            condition.lock()
            nodes = frozen
            condition.broadcast()
            condition.unlock()
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
        }

        func wait() throws -> FrozenNodes {
            condition.lock()
            defer { condition.unlock() }
            while nodes == nil && !cancelled { condition.wait() }
            guard let nodes else { throw Cancelled() }
            return nodes
        }
    }

    /// What one block makes, converted on a thread of `ParallelBlockReader`: its nodes' locations and house numbers,
    /// the POIs, addresses and streets of its nodes and ways, and its problems. Relations need every way, so they are
    /// only carried here, and converted in file order by `State.merge`.
    struct Piece: Sendable {
        let importer: OSMImporter
        let file: String
        /// Where the block starts in the file.
        let offset: Int
        /// Every node of the file; nil for a block without ways, and for the block where the nodes end (its ways
        /// are converted by `State.merge` once its own nodes are in).
        let nodes: FrozenNodes?
        var result = OSMImport()
        /// POIs (by index) whose tags lack a city or a country, placed by `locate` once the extract is read.
        var unlocated: [Int] = []
        /// The block's nodes, packed here (on the block's thread) and appended to the store by `State.merge`.
        var nodeRun = NodeLocationStore.Run()
        var numberIDs: [Int64] = []
        var numberValues: [Int] = []
        var ways: [OSMWay] = []
        var relations: [OSMRelation] = []
        /// The ways with output and their tags, for the mirror change files are applied to.
        var outputWays: [(Int64, [OSMTag])] = []
        /// The stretches of `natural=coastline` ways the file has, for the sea (`Coastline`), and the ways' ids.
        var coastline: [Coastline.Piece] = []
        var coastlineWays: [Int64] = []

        init(importer: OSMImporter, file: String, offset: Int, nodes: FrozenNodes?) {
            (self.importer, self.file, self.offset, self.nodes) = (importer, file, offset, nodes)
        }

        mutating func problem(_ reason: String) throws(ImportError) {
            let problem = ImportProblem(file: file, line: 0, reason: reason)
            if importer.strict { throw .rejected(problem) }
            result.report.problems.add(problem)
        }

        mutating func take(_ block: OSMBlock) throws(ImportError) {
            nodeRun.reserve(block.nodes.count)
            result.report.nodes += block.nodes.count
            // By index: each node's fields read where they lie, not the node (and its tags' array) copied.
            for i in block.nodes.indices {
                let (id, latitude, longitude) = (block.nodes[i].id, block.nodes[i].latitude, block.nodes[i].longitude)
                nodeRun.append(id: id, latitude: NodeLocationStore.fixed(latitude), longitude: NodeLocationStore.fixed(longitude))
                guard !block.nodes[i].tags.isEmpty else { continue }
                if let text = block.nodes[i].tags["addr:housenumber"], let number = OSMImporter.leadingNumber(text) {
                    numberIDs.append(id)
                    numberValues.append(number)
                }
                try place(OSMImporter.objectID("osm-n", id), block.nodes[i].tags, at: (latitude, longitude))
            }
            ways = block.ways
            if nodes != nil { try takeWays() }
            relations = block.relations
            result.report.relations += block.relations.count
        }

        /// Converts the block's ways (`nodes` is set).
        mutating func takeWays() throws(ImportError) {
            for way in ways {
                result.report.ways += 1
                guard !way.tags.isEmpty else { continue }
                try take(way)
            }
        }

        /// The way's points; a missing node is reported and left out.
        mutating func points(of object: @autoclosure () -> String, _ refs: [Int64]) throws(ImportError) -> [AreaGeometry.Point] {
            guard let store = nodes?.store else { return [] }
            var out: [AreaGeometry.Point] = []
            out.reserveCapacity(refs.count)
            var missing: [Int64] = []
            var cursor = NodeLocationStore.Cursor()
            for ref in refs {
                if let p = store.location(of: ref, cursor: &cursor) { out.append(p) } else { missing.append(ref) }
            }
            if !missing.isEmpty {
                let shown = missing.prefix(3).map(String.init).joined(separator: ", ")
                try problem("\(object()) refers to \(missing.count) node(s) the file does not have (\(shown)\(missing.count > 3 ? ", …" : ""))")
            }
            return out
        }

        mutating func take(_ way: OSMWay) throws(ImportError) {
            let tags = way.tags
            let wantsPOI = tags["name"] != nil && importer.mapping.category({ tags[$0] }) != nil
            let wantsAddress = tags["addr:housenumber"] != nil
            let highway = tags["highway"]
            let wantsStreet = highway != nil && !OSMImporter.notStreets.contains(highway!) && tags["name"] != nil
            let interpolation = tags["addr:interpolation"]
            let areaKind = way.isClosed ? MapArea.kind({ tags[$0] }) : nil
            let isCoastline = tags["natural"] == "coastline"
            if isCoastline { takeCoastline(way) }
            let makesSomething = wantsPOI || wantsAddress || wantsStreet || interpolation != nil || areaKind != nil
            guard makesSomething || isCoastline else { return }
            if importer.keepsMirror { outputWays.append((way.id, tags)) }
            // A coastline is output of the whole file (the sea), made once it is read (`State.addSea`).
            guard makesSomething else { return }
            let points = try self.points(of: "way \(way.id)", way.refs)
            guard !points.isEmpty else { return }
            let id = OSMImporter.objectID("osm-w", way.id)
            // An area whose nodes are all in the file (one the extract cut has no shape to draw).
            if let areaKind, points.count == way.refs.count, points.count >= 4 {
                let ring = MapArea.Ring(outer: true, points: points.dropLast().map { Coordinate2($0.latitude, $0.longitude) })
                result.addresses.areas.append(MapArea(id: id, kind: areaKind, name: OSMImporter.clean(tags["name"]), rings: [ring]))
                result.report.areas += 1
            }
            if wantsPOI || wantsAddress {
                let at: AreaGeometry.Point
                if way.isClosed, let inside = AreaGeometry.interiorPoint(outer: [points]) {
                    at = inside
                } else {
                    at = points[points.count / 2]
                }
                try place(id, tags, at: at)
            }
            // A street's or an interpolation's line only: most ways are buildings.
            guard wantsStreet || interpolation != nil, points.count >= 2 else { return }
            let line = points.map { Coordinate2($0.latitude, $0.longitude) }
            if wantsStreet, line.count >= 2 {
                result.addresses.streets.append(
                    StreetLine(id: id, names: OSMImporter.names(tags), points: line, city: tags["addr:city"])
                )
                result.report.streets += 1
            }
            if let interpolation, let street = tags["addr:street"], line.count >= 2 {
                let kind: StreetLine.Kind = interpolation == "odd" ? .odd : interpolation == "even" ? .even : .all
                var numbers: [NumberedVertex] = []
                var vertex = 0
                var cursor = NodeLocationStore.Cursor()
                for ref in way.refs where nodes?.store.location(of: ref, cursor: &cursor) != nil {
                    if let n = nodes?.number(of: ref) { numbers.append(NumberedVertex(vertex: vertex, number: n)) }
                    vertex += 1
                }
                if numbers.count >= 2 {
                    result.addresses.streets.append(
                        StreetLine(
                            id: id,
                            kind: kind,
                            names: [street],
                            points: line,
                            numbers: numbers,
                            city: tags["addr:city"],
                            postcode: tags["addr:postcode"]
                        )
                    )
                    result.report.interpolations += 1
                } else {
                    try problem("interpolation way \(way.id) has fewer than two numbered nodes")
                }
            }
        }

        /// The stretches of a coastline way whose nodes the file has.
        mutating func takeCoastline(_ way: OSMWay) {
            coastlineWays.append(way.id)
            guard let store = nodes?.store else { return }
            var cursor = NodeLocationStore.Cursor()
            coastline += Coastline.Piece.stretches(of: way.refs) { store.location(of: $0, cursor: &cursor) }
        }

        mutating func take(_ relation: OSMRelation, ways: WayTable) throws(ImportError) {
            guard importer.hasOutput(relation: relation.tags) else { return }
            let tags = relation.tags
            var outer: [[Int64]] = []
            var inner: [[Int64]] = []
            for member in relation.members where member.type == .way {
                guard let refs = ways.refs(of: member.ref) else {
                    try problem("relation \(relation.id) refers to way \(member.ref), which the file does not have")
                    continue
                }
                if member.role == "inner" { inner.append(refs) } else { outer.append(refs) }
            }
            let outerRings = AreaGeometry.assembleRings(outer)
            let innerRings = AreaGeometry.assembleRings(inner)
            if outerRings.open > 0 { try problem("relation \(relation.id) has outer ways that do not close into rings") }
            var outerPoints: [[AreaGeometry.Point]] = []
            for ring in outerRings.rings { outerPoints.append(try points(of: "relation \(relation.id)", ring)) }
            var innerPoints: [[AreaGeometry.Point]] = []
            for ring in innerRings.rings { innerPoints.append(try points(of: "relation \(relation.id)", ring)) }
            let complete =
                outerRings.open == 0 && innerRings.open == 0 && !outerPoints.isEmpty
                && zip(outerRings.rings + innerRings.rings, outerPoints + innerPoints).allSatisfy { $0.count == $1.count }
            if let kind = MapArea.kind({ tags[$0] }), complete {
                result.addresses.areas.append(
                    MapArea(
                        id: OSMImporter.objectID("osm-r", relation.id),
                        kind: kind,
                        name: OSMImporter.clean(tags["name"]),
                        rings: OSMImporter.rings(outer: outerPoints, inner: innerPoints)
                    )
                )
                result.report.areas += 1
            }
            guard let at = AreaGeometry.interiorPoint(outer: outerPoints, inner: innerPoints) else {
                try problem("relation \(relation.id) has no area to place it in")
                return
            }
            try place(OSMImporter.objectID("osm-r", relation.id), tags, at: at)
        }

        /// Adds the POI and the addresses an object's tags make.
        mutating func place(_ id: String, _ tags: [OSMTag], at point: AreaGeometry.Point) throws(ImportError) {
            if let name = OSMImporter.clean(tags["name"]), let category = importer.mapping.category({ tags[$0] }) {
                var kept: [String: String] = [:]
                for key in OSMTagMapping.keptTags { if let v = OSMImporter.clean(tags[key]) { kept[key] = v } }
                let street = [tags["addr:street"] ?? tags["addr:place"], tags["addr:housenumber"]].compactMap { OSMImporter.clean($0) }.joined(
                    separator: " "
                )
                let country = tags["addr:country"].flatMap { $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isLetter } ? $0.uppercased() : nil }
                let city = OSMImporter.clean(tags["addr:city"])
                if country == nil || city == nil { unlocated.append(result.pois.count) }
                let poi = POIRecord(
                    id: id,
                    name: String(name.prefix(200)),
                    category: category,
                    address: street.isEmpty ? nil : String(street.prefix(500)),
                    city: city.map { String($0.prefix(500)) },
                    country: country,
                    lat: point.latitude,
                    lon: point.longitude,
                    tags: kept
                )
                result.pois.append(poi)
                result.report.pois += 1
            }
            if let numbers = tags["addr:housenumber"] {
                let street = OSMImporter.clean(tags["addr:street"])
                let place = OSMImporter.clean(tags["addr:place"])
                if street != nil || place != nil { addAddresses(id, numbers, street: street, place: place, tags, point) }
            }
        }

        mutating func addAddresses(_ id: String, _ numbers: String, street: String?, place: String?, _ tags: [OSMTag], _ point: AreaGeometry.Point) {
            var k = 0
            AddressPoint.forEachNumber(in: numbers) { number in
                defer { k += 1 }
                result.addresses.addresses.append(
                    AddressPoint(
                        id: k == 0 ? id : "\(id)#\(k + 1)",
                        street: street,
                        place: place,
                        housenumber: number,
                        unit: OSMImporter.clean(tags["addr:unit"]),
                        postcode: OSMImporter.clean(tags["addr:postcode"]),
                        city: OSMImporter.clean(tags["addr:city"]),
                        latitude: point.latitude,
                        longitude: point.longitude
                    )
                )
                result.report.addresses += 1
            }
        }
    }

    /// The state of one pass, on the reading thread: the pieces gathered in file order, the nodes until the first
    /// block of ways (then frozen and shared with the threads converting ways), the way table relations are built
    /// from, and relations converted as they come.
    struct State {
        let importer: OSMImporter
        let file: String
        var result = OSMImport()
        var unlocated: [Int] = []
        var nodes = NodeLocationStore()
        var numberIDs: [Int64] = []
        var numberValues: [Int] = []
        var frozen: FrozenNodes?
        var ways = WayTable()
        var lateNodesReported = false
        /// Every relation (members and tags of multipolygons with output).
        var relations: [(id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?)] = []
        var coastline: [Coastline.Piece] = []
        var coastlineWays: [Int64] = []
        /// The box the sea was closed along (set by `addSea`), kept with the mirror for change files.
        var box: Coastline.Box?

        init(importer: OSMImporter, file: String) {
            self.importer = importer
            self.file = file
        }

        /// Ends the nodes: sorted when the file's were not, then handed to the threads waiting at `gate`.
        mutating func freezeNodes(_ gate: NodeGate) {
            guard frozen == nil else { return }
            nodes.finish()
            sortNodeNumbers()
            let frozen = FrozenNodes(store: nodes, numberIDs: numberIDs, numberValues: numberValues)
            self.frozen = frozen
            result.report.bytesPerNode = nodes.bytesPerNode
            (nodes, numberIDs, numberValues) = (NodeLocationStore(), [], [])
            gate.open(frozen)
        }

        /// Takes the next piece in file order.
        mutating func merge(_ piece: Piece, _ gate: NodeGate) throws(ImportError) {
            if piece.nodeRun.count > 0 {
                if frozen == nil {
                    nodes.append(piece.nodeRun)
                    numberIDs.append(contentsOf: piece.numberIDs)
                    numberValues.append(contentsOf: piece.numberValues)
                } else if !lateNodesReported {
                    // Files are sorted nodes, then ways, then relations (osmium, osmconvert, Osmosis); ways were
                    // already being built when these nodes came.
                    lateNodesReported = true
                    var note = Piece(importer: importer, file: file, offset: piece.offset, nodes: nil)
                    try note.problem(
                        "the nodes of the block at byte offset \(piece.offset) come after ways: no way can use them (is the file sorted?)"
                    )
                    add(note.result, unlocated: [])
                }
            }
            if !piece.ways.isEmpty || !piece.relations.isEmpty { freezeNodes(gate) }
            add(piece.result, unlocated: piece.unlocated)
            var outputTags = Dictionary(piece.outputWays, uniquingKeysWith: { $1 })
            coastline += piece.coastline
            coastlineWays += piece.coastlineWays
            if piece.nodes == nil && !piece.ways.isEmpty {
                // The block where the nodes end: its ways are converted here, now that its nodes are in.
                var ways = Piece(importer: importer, file: file, offset: piece.offset, nodes: frozen)
                ways.ways = piece.ways
                try ways.takeWays()
                add(ways.result, unlocated: ways.unlocated)
                for (id, tags) in ways.outputWays { outputTags[id] = tags }
                coastline += ways.coastline
                coastlineWays += ways.coastlineWays
            }
            for way in piece.ways { ways.append(way.id, way.refs, tags: outputTags[way.id]) }
            guard !piece.relations.isEmpty else { return }
            ways.finish()
            var relations = Piece(importer: importer, file: file, offset: piece.offset, nodes: frozen)
            for relation in piece.relations {
                if relation.tags["type"] == "multipolygon" && importer.hasOutput(relation: relation.tags) {
                    self.relations.append((relation.id, relation.members, relation.tags))
                    try relations.take(relation, ways: ways)
                } else {
                    self.relations.append((relation.id, nil, nil))
                }
            }
            add(relations.result, unlocated: relations.unlocated)
        }

        /// What change files are applied to later (`OSMMirror`): the nodes, ways and relations as read.
        func mirror(timestamp: String?) -> OSMMirrorImport {
            var mirror = OSMMirrorImport()
            if let frozen {
                mirror.nodes = frozen.store
                (mirror.numberIDs, mirror.numberValues) = (frozen.numberIDs, frozen.numberValues)
            } else {
                var nodes = self.nodes
                nodes.finish()
                mirror.nodes = nodes
                var numbers = self
                numbers.sortNodeNumbers()
                (mirror.numberIDs, mirror.numberValues) = (numbers.numberIDs, numbers.numberValues)
            }
            var ways = self.ways
            ways.finish()
            mirror.ways = ways
            mirror.relations = relations
            mirror.coastlineWays = coastlineWays
            mirror.state.box = box
            mirror.state.timestamp = timestamp
            return mirror
        }

        /// Adds a piece's POIs, addresses, streets, counts and problems (the first 1 000 of the file kept).
        mutating func add(_ part: OSMImport, unlocated partUnlocated: [Int]) {
            unlocated.append(contentsOf: partUnlocated.map { $0 + result.pois.count })
            result.pois.append(contentsOf: part.pois)
            result.addresses.addresses.append(contentsOf: part.addresses.addresses)
            result.addresses.streets.append(contentsOf: part.addresses.streets)
            result.addresses.areas.append(contentsOf: part.addresses.areas)
            let r = part.report
            result.report.nodes += r.nodes
            result.report.ways += r.ways
            result.report.relations += r.relations
            result.report.pois += r.pois
            result.report.addresses += r.addresses
            result.report.streets += r.streets
            result.report.interpolations += r.interpolations
            result.report.areas += r.areas
            result.report.problems.add(r.problems)
        }

        /// The sea the coastline bounds, within the file's box (or its nodes' box when the header has none).
        mutating func addSea(box header: (west: Double, south: Double, east: Double, north: Double)?) throws(ImportError) {
            var box = header.map { Coastline.Box(west: $0.west, south: $0.south, east: $0.east, north: $0.north) }
            self.box = box
            guard !coastline.isEmpty else { return }
            if box == nil, let frozen {
                var b = Coastline.Box(west: .infinity, south: .infinity, east: -.infinity, north: -.infinity)
                frozen.store.forEachNode { _, fixedLatitude, fixedLongitude in
                    let (latitude, longitude) = (Double(fixedLatitude) / 1e7, Double(fixedLongitude) / 1e7)
                    (b.west, b.east) = (min(b.west, longitude), max(b.east, longitude))
                    (b.south, b.north) = (min(b.south, latitude), max(b.north, latitude))
                }
                box = b
                self.box = b
            }
            let (sea, problems) = OSMImporter.sea(coastline, box: box ?? Coastline.Box(west: 0, south: 0, east: 0, north: 0))
            var note = Piece(importer: importer, file: file, offset: 0, nodes: nil)
            for problem in problems { try note.problem(problem) }
            add(note.result, unlocated: [])
            result.addresses.areas.append(contentsOf: sea)
            result.report.areas += sea.count
        }

        /// Gives the POIs that lack them the city and country of their point.
        /// Places the POIs without a city or country, on every core: a reverse geocode each (~11 µs). On the reading
        /// thread alone it was 1.44 s of a 10 M-node country-shaped extract's 5.4 s read; on two cores, 0.82 s.
        mutating func locateUnlocated() throws(ImportError) {
            guard let locate = importer.locate, !unlocated.isEmpty else { return }
            let points = unlocated.map { (result.pois[$0].lat, result.pois[$0].lon) }
            let found: [(city: String?, country: String?)]
            do {
                found = try ConcurrentRanges.map(points.count) { range in try range.map { try locate(points[$0].0, points[$0].1) } }
            } catch {
                throw .cannotRead("\(file): cannot place POIs in cities: \(error)")
            }
            for (i, place) in zip(unlocated, found) {
                result.pois[i].city = result.pois[i].city ?? place.city.map { String($0.prefix(500)) }
                result.pois[i].country = result.pois[i].country ?? place.country
            }
        }

        /// Sorts the nodes' house numbers by id when the file's nodes were not (the last of an id wins).
        mutating func sortNodeNumbers() {
            guard zip(numberIDs, numberIDs.dropFirst()).contains(where: { $0 >= $1 }) else { return }
            var latest: [Int64: Int] = [:]
            for (id, number) in zip(numberIDs, numberValues) { latest[id] = number }
            numberIDs = latest.keys.sorted()
            numberValues = numberIDs.map { latest[$0]! }
        }
    }

    /// `prefix` and the id's decimal digits ("osm-n" and 42: "osm-n42"), written digit by digit: string
    /// interpolation of an integer was a twentieth of converting two million house nodes.
    static func objectID(_ prefix: StaticString, _ id: Int64) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix.utf8CodeUnitCount + 20) { buffer in
            var n = 0
            for i in 0..<prefix.utf8CodeUnitCount {
                buffer[n] = prefix.utf8Start[i]
                n += 1
            }
            if id < 0 {
                buffer[n] = UInt8(ascii: "-")
                n += 1
            }
            var magnitude = id.magnitude
            let start = n
            repeat {
                buffer[n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            buffer[start..<n].reverse()
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<n]), as: UTF8.self)
        }
    }

    /// A tag value with control characters and surrounding spaces removed; nil when nothing is left.
    static func clean(_ value: String?) -> String? {
        guard let value else { return nil }
        // Nearly every value is already clean: printable, no space at either end. Checked on the UTF-8 bytes (a C1
        // control is encoded 0xC2 0x80...0x9F). `check` answers 0: not clean; 1: clean; 2: clean but for its first or
        // last character, which is beyond ASCII.
        func check(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            guard let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20 else { return 0 }
            var previous: UInt8 = 0
            for byte in bytes {
                if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) { return 0 }
                previous = byte
            }
            return first < 0x80 && last < 0x80 ? 1 : 2
        }
        // On the bytes where they lie (a native or small string always has them contiguous). A value that starts or
        // ends beyond ASCII may start or end with a space of another script (U+00A0, U+2003, U+3000 …): its first and
        // last scalars are looked at.
        switch value.utf8.withContiguousStorageIfAvailable(check) ?? Array(value.utf8).withUnsafeBufferPointer(check) {
        case 1: return value
        case 2:
            if !CharacterSet.whitespaces.contains(value.unicodeScalars.first!) && !CharacterSet.whitespaces.contains(value.unicodeScalars.last!) {
                return value
            }
        default: break
        }
        guard !value.isEmpty else { return nil }
        let cleaned = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.properties.generalCategory != .control }))
            .trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : cleaned
    }

    /// The number a house number starts with ("13" of "13 A"), read from its UTF-8 bytes.
    static func leadingNumber(_ text: String) -> Int? {
        var number = 0
        var digits = 0
        for byte in text.utf8 {
            guard (0x30...0x39).contains(byte), digits < 9 else { break }
            number = number * 10 + Int(byte - 0x30)
            digits += 1
        }
        return digits > 0 ? number : nil
    }

    /// The name variants of a street: `name` first, then the others (lists split at ";"), without repeats.
    static func names(_ tags: [OSMTag]) -> [String] {
        var out: [String] = []
        for key in nameKeys {
            guard let value = tags[key] else { continue }
            for part in value.split(separator: ";") {
                if let name = clean(String(part)), !out.contains(name) { out.append(name) }
            }
        }
        return out
    }
}
