import BundledData
import Foundation
import GeoCore
import Parallelism
import Records
import Synchronization

/// A live area (docs/ARCHITECTURE.md, "Live areas"): a circle, box or polygon, the transitions it reports (enter,
/// exit, inside) and which records it watches.
public struct Fence: Sendable, Equatable {
    public enum Area: Sendable, Equatable {
        /// Within `radius` metres (great circle) of `center`.
        case circle(center: Coordinate, radius: Double)
        case box(BoundingBox)
        case polygon(Polygon)
    }

    /// What a write of a watched record reports: `enter` when it moves in (or is created inside), `exit` when it
    /// moves out (or is deleted inside), `inside` on every write that leaves it inside (moved or edited there).
    public enum Detect: String, Sendable, CaseIterable, Comparable {
        case enter, exit, inside
        public static func < (a: Detect, b: Detect) -> Bool { a.rawValue < b.rawValue }
    }

    public var id: String
    public var area: Area
    public var detect: [Detect]
    public var kind: KindFilter
    /// Records of any of these category paths (or below) only (POIs; pins have none).
    public var categories: [String]
    /// Where each event is POSTed as well, in order, with retries.
    public var webhook: String?

    public init(
        id: String,
        area: Area,
        detect: [Detect] = [.enter, .exit],
        kind: KindFilter = .pin,
        categories: [String] = [],
        webhook: String? = nil
    ) {
        self.id = id
        self.area = area
        self.detect = Array(Set(detect)).sorted()
        self.kind = kind
        self.categories = categories
        self.webhook = webhook
    }

    public func contains(latitude: Double, longitude: Double) -> Bool {
        switch area {
        case .circle(let center, let radius):
            return GreatCircle.distance(latitude1: center.latitude, longitude1: center.longitude, latitude2: latitude, longitude2: longitude)
                <= radius
        case .box(let box): return box.contains(latitude: latitude, longitude: longitude)
        case .polygon(let polygon): return polygon.contains(latitude: latitude, longitude: longitude)
        }
    }

    /// A box holding the area (a circle's by its radius).
    public var bounds: BoundingBox {
        switch area {
        case .circle(let center, let radius): return BoundingBox.around(center, radius: radius * 1.001 + 1)
        case .box(let box): return box
        case .polygon(let polygon): return polygon.boundingBox
        }
    }

    /// Whether it watches this record.
    func watches(_ record: Hit.Record) -> Bool {
        switch record {
        case .pin: return kind.includes(.pin) && categories.isEmpty
        case .poi(let poi): return kind.includes(.poi) && (categories.isEmpty || categories.admits(poi.category))
        }
    }
}

/// One transition a write made: the record before and after (nil: it did not exist / was deleted).
struct RecordTransition {
    let before: Hit.Record?
    let after: Hit.Record?
}

/// The fences of an engine, found by position through a grid of 0.01° cells (a fence covering more than 10 000
/// cells is tested on every write), their events kept in a `FenceLog` — SQLite's `FenceStore`, or PostgreSQL's
/// `PostgresFenceLog` that several servers share (a `SharedFenceLog`, followed by `follow`) — and handed to
/// subscribers (SSE, webhooks) in the order of their numbers.
public final class FenceBook: Sendable {
    public let store: any FenceLog
    /// A fence as writes test it, with its box, behind one reference: a candidate costs a retain, not a copy of the
    /// definition's strings and arrays.
    private final class Entry: Sendable {
        let fence: Fence
        let bounds: BoundingBox
        /// The grid cells that list it (nil: too many; it is in `large`).
        let cells: [CellRange]?

        init(_ fence: Fence) {
            self.fence = fence
            bounds = fence.bounds
            cells = FenceBook.cellRanges(of: bounds)
        }

        /// Whether the grid lists it under `cell`.
        func covers(_ cell: Cell) -> Bool {
            cells?.contains { $0.rows.contains(cell.row) && $0.columns.contains(cell.column) } ?? false
        }

        /// Whether it holds the record and watches it: the box first, which rules out most candidates without the
        /// great-circle distance.
        func holds(_ record: Hit.Record?) -> Bool {
            guard let record else { return false }
            let p = record.position
            return bounds.contains(latitude: p.latitude, longitude: p.longitude) && fence.watches(record)
                && fence.contains(latitude: p.latitude, longitude: p.longitude)
        }
    }

    private struct Index: Sendable {
        var fences: [String: Entry] = [:]
        var grid: [Int64: [Entry]] = [:]
        var large: [Entry] = []
    }

    private let index = Mutex(Index())
    private let subscribers = Mutex<[UInt64: @Sendable ([FenceEvent]) -> Void]>([:])
    private let nextSubscriber = Atomic<UInt64>(0)
    private let watchers = Mutex<[@Sendable (String, Fence?) -> Void]>([])
    /// A shared log's position: the last event handed to the subscribers (held while handing, so that they get every
    /// event once and in order), and the last definition version read.
    private let handed = Mutex<Int64>(0)
    /// A copy of `handed` for `/health`, read without its lock: `handed` is held across a read of the shared store,
    /// and an event loop waiting for it would stall behind PostgreSQL (in a failover, for good: the read itself
    /// needs that loop).
    private let handedMark = Atomic<Int64>(0)
    private let definitionVersion = Mutex<Int64>(0)
    private let following = Mutex<(stop: Bool, thread: Thread?)>((false, nil))
    private let followed = Mutex(FollowStatus())
    static let cellDegrees = 0.01
    static let largeCells = 10_000

    /// The fences kept in `store`; a definition that no longer parses is a storage error. A shared store's events are
    /// handed out from those after the ones it has now.
    public init(store: any FenceLog) throws(SearchError) {
        self.store = store
        let kept: [(id: String, definition: String)]
        do {
            if let shared = store as? any SharedFenceLog {
                let latest = try shared.latest()
                handed.withLock { $0 = latest.sequence }
                handedMark.store(latest.sequence, ordering: .relaxed)
                definitionVersion.withLock { $0 = latest.version }
            }
            kept = try store.fences()
        } catch {
            throw .storage("fences: \(error)")
        }
        for (id, definition) in kept {
            let fence = try Fence(json: definition, id: id)
            index.withLock { Self.add(fence, to: &$0) }
        }
    }

    /// The store when other servers share it: then each write's events are made by the server that made the write,
    /// and this book follows what the others add (`follow`).
    public var shared: (any SharedFenceLog)? { store as? any SharedFenceLog }

    public var fences: [Fence] { index.withLock { $0.fences.values.map(\.fence).sorted { $0.id < $1.id } } }

    public var isEmpty: Bool { index.withLock { $0.fences.isEmpty } }

    public func fence(id: String) -> Fence? { index.withLock { $0.fences[id]?.fence } }

    /// Adds or replaces a fence, durable first.
    public func put(_ fence: Fence) throws(SearchError) {
        do { try store.put(id: fence.id, definition: fence.json) } catch { throw .storage("fences: \(error)") }
        index.withLock { index in
            Self.remove(fence.id, from: &index)
            Self.add(fence, to: &index)
        }
    }

    /// Removes a fence and its events. - Throws: `.notFound` when there is none.
    public func delete(id: String) throws(SearchError) {
        guard fence(id: id) != nil else { throw .notFound(kind: "fence", id: id) }
        do { try store.delete(id: id) } catch { throw .storage("fences: \(error)") }
        index.withLock { Self.remove(id, from: &$0) }
    }

    /// Calls `body` with every fence another server put (or nil: deleted), as this book learns of it (`follow`).
    public func watchDefinitions(_ body: @escaping @Sendable (String, Fence?) -> Void) { watchers.withLock { $0.append(body) } }

    /// How following a shared store goes, for `/health`: the last event handed out, when a round last read the
    /// store whole, and the error of the last round that could not (cleared by the next that could).
    public struct FollowStatus: Sendable {
        public var handed: Int64 = 0
        public var readAt: Date?
        public var lastError: String?
        public var failures = 0
    }

    /// Where following a shared store stands (nil: the store is this server's own, or it is not followed).
    public var followStatus: FollowStatus? {
        guard shared != nil, following.withLock({ $0.thread != nil }) else { return nil }
        var status = followed.withLock { $0 }
        status.handed = handedMark.load(ordering: .relaxed)
        return status
    }

    /// Follows a shared store on a thread of its own until `stopFollowing`: the fences other servers put or delete
    /// reach the index, and their events the subscribers, in the store's order, within a second (at once when
    /// PostgreSQL's notification arrives). Nothing for a store of this server's own. A round that cannot read the
    /// store (PostgreSQL down or failing over) is tried again at the next, and `followStatus` says so meanwhile.
    public func follow() {
        guard let shared else { return }
        let thread = Thread.named("poi-fences") { [self] in
            while !following.withLock({ $0.stop }) {
                do {
                    try readDefinitions()
                    try handEvents(through: .max)
                    followed.withLock {
                        $0.readAt = Date()
                        $0.lastError = nil
                    }
                } catch {
                    followed.withLock {
                        $0.lastError = "\(error)"
                        $0.failures += 1
                    }
                }
                shared.waitForNews(seconds: 1)
            }
        }
        following.withLock { $0 = (false, thread) }
        thread.start()
    }

    /// Stops following (a shutdown, tests); returns once the thread has ended its round.
    public func stopFollowing() {
        guard following.withLock({ $0.thread != nil }) else { return }
        following.withLock { $0.stop = true }
        while !(following.withLock { $0.thread?.isFinished ?? true }) { usleep(2_000) }
        following.withLock { $0 = (false, nil) }
    }

    /// The definitions other servers changed since the last read, applied to the index and told to the watchers. A
    /// definition this book already has (its own put, read back) changes nothing.
    func readDefinitions() throws {
        guard let shared else { return }
        let (changes, version) = try shared.definitions(after: definitionVersion.withLock { $0 })
        for (id, definition) in changes {
            let fence = definition.flatMap { try? Fence(json: $0, id: id) }
            let changed: Bool = index.withLock { index in
                guard index.fences[id]?.fence != fence else { return false }
                Self.remove(id, from: &index)
                if let fence { Self.add(fence, to: &index) }
                return true
            }
            if changed { for watcher in watchers.withLock({ $0 }) { watcher(id, fence) } }
        }
        definitionVersion.withLock { $0 = version }
    }

    /// Hands the subscribers every event of the shared store after the last handed, up to `sequence`, in order.
    func handEvents(through sequence: Int64, known: [FenceEvent] = []) throws {
        guard let shared else { return }
        try handed.withLock { handed in
            while handed < sequence {
                // The events just appended here follow the last handed: no need to read them back.
                let batch =
                    known.first?.sequence == handed + 1 ? known : try shared.events(after: handed, limit: 1_000)
                guard let last = batch.last else { return }
                for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber(batch) }
                handed = last.sequence
                handedMark.store(last.sequence, ordering: .relaxed)
            }
        }
    }

    /// Calls `body` with every batch of events as it is stored, until the returned token is passed to `unsubscribe`.
    public func subscribe(_ body: @escaping @Sendable ([FenceEvent]) -> Void) -> UInt64 {
        let token = nextSubscriber.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[token] = body }
        return token
    }

    public func unsubscribe(_ token: UInt64) { _ = subscribers.withLock { $0.removeValue(forKey: token) } }

    /// A cell of the grid: `cellDegrees` of latitude by as many of longitude, keyed `row * 100_000 + column`.
    struct Cell: Equatable {
        let row: Int64
        let column: Int64
        var key: Int64 { row * 100_000 + column }

        init(latitude: Double, longitude: Double) {
            row = Int64((latitude / cellDegrees).rounded(.down))
            column = Int64((longitude / cellDegrees).rounded(.down))
        }
    }

    struct CellRange {
        let rows: ClosedRange<Int64>
        let columns: ClosedRange<Int64>
    }

    /// The cells of a box, as a range of rows and columns per side of the antimeridian; nil when they are more than
    /// `largeCells`.
    static func cellRanges(of box: BoundingBox) -> [CellRange]? {
        var out: [CellRange] = []
        var total: Int64 = 0
        for part in box.antimeridianParts {
            let south = Int64((part.south / cellDegrees).rounded(.down))
            let north = Int64((part.north / cellDegrees).rounded(.down))
            let west = Int64((part.west / cellDegrees).rounded(.down))
            let east = Int64((part.east / cellDegrees).rounded(.down))
            total += (north - south + 1) * (east - west + 1)
            guard total <= Int64(largeCells) else { return nil }
            out.append(CellRange(rows: south...north, columns: west...east))
        }
        return out
    }

    private static func cells(of entry: Entry) -> [Int64]? {
        entry.cells.map { ranges in ranges.flatMap { range in range.rows.flatMap { row in range.columns.map { row * 100_000 + $0 } } } }
    }

    private static func add(_ fence: Fence, to index: inout Index) {
        let entry = Entry(fence)
        index.fences[fence.id] = entry
        if let cells = cells(of: entry) {
            for cell in cells { index.grid[cell, default: []].append(entry) }
        } else {
            index.large.append(entry)
        }
    }

    private static func remove(_ id: String, from index: inout Index) {
        guard let entry = index.fences.removeValue(forKey: id) else { return }
        if let cells = cells(of: entry) {
            for cell in cells {
                index.grid[cell]?.removeAll { $0 === entry }
                if index.grid[cell]?.isEmpty == true { index.grid[cell] = nil }
            }
        } else {
            index.large.removeAll { $0 === entry }
        }
    }

    /// The events of the writes' transitions, in the order of the writes and, within one, of the fences' ids;
    /// stored, then handed to the subscribers. Called in write order (under the engine's writer lock).
    func record(_ transitions: [RecordTransition], at time: String) throws(SearchError) {
        var events: [(fence: String, detect: String, make: (Int64) -> String)] = []
        index.withLock { index in
            guard !index.fences.isEmpty else { return }
            var found: [(fence: String, detect: Fence.Detect, record: Hit.Record)] = []
            for transition in transitions {
                found.removeAll(keepingCapacity: true)
                let record = transition.after ?? transition.before!
                func consider(_ entry: Entry) {
                    if let detect = Self.detect(entry, transition) { found.append((entry.fence.id, detect, record)) }
                }
                // The fences of the cells of the record's old and new positions (once each: a fence listed under
                // both is taken from the first), and the large ones.
                let before = transition.before.map { Cell(latitude: $0.position.latitude, longitude: $0.position.longitude) }
                let after = transition.after.map { Cell(latitude: $0.position.latitude, longitude: $0.position.longitude) }
                if let before { for entry in index.grid[before.key] ?? [] { consider(entry) } }
                if let after, after != before {
                    for entry in index.grid[after.key] ?? [] where !(before.map(entry.covers) ?? false) { consider(entry) }
                }
                for entry in index.large { consider(entry) }
                found.sort { $0.fence < $1.fence }
                for event in found {
                    let detect = event.detect
                    let record = event.record
                    events.append(
                        (
                            event.fence, detect.rawValue,
                            { sequence in Self.json(sequence: sequence, fence: event.fence, detect: detect, record: record, time: time) }
                        )
                    )
                }
            }
        }
        guard !events.isEmpty else { return }
        let stored: [FenceEvent]
        do { stored = try store.append(events) } catch { throw .storage("fence events: \(error)") }
        if shared != nil {
            // Other servers' events may come first in the one sequence: handed out in its order.
            try? handEvents(through: stored.last!.sequence, known: stored)
        } else {
            for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber(stored) }
        }
    }

    /// What a transition reports to one fence, if anything.
    private static func detect(_ entry: Entry, _ transition: RecordTransition) -> Fence.Detect? {
        let fence = entry.fence
        let wasInside = entry.holds(transition.before)
        let isInside = entry.holds(transition.after)
        let detect: Fence.Detect
        switch (wasInside, isInside) {
        case (false, true): detect = .enter
        case (true, false): detect = .exit
        case (true, true): detect = .inside
        case (false, false): return nil
        }
        return fence.detect.contains(detect) ? detect : nil
    }

    /// An event as clients receive it: `{"id", "fence", "detect", "time", "object": {"kind", "id", "lat", "lon", …}}`
    /// (keys in that order; written with `JSONWriter`, as every answer is).
    static func json(sequence: Int64, fence: String, detect: Fence.Detect, record: Hit.Record, time: String) -> String {
        var json = JSONWriter(capacity: 384)
        json.beginObject()
        json.field("id", Int(sequence))
        json.field("fence", fence)
        json.field("detect", detect.rawValue)
        json.field("time", time)
        json.key("object")
        json.beginObject()
        // What the object is and where: the same four fields first for both kinds.
        let (kind, id) =
            switch record {
            case .pin(let pin): ("pin", pin.id)
            case .poi(let poi): ("poi", poi.id)
            }
        json.field("kind", kind)
        json.field("id", id)
        json.field("lat", record.position.latitude)
        json.field("lon", record.position.longitude)
        switch record {
        case .pin(let pin):
            json.field("firstName", pin.firstName)
            json.field("lastName", pin.lastName)
            json.field("mapString", pin.mapString)
            json.field("mediaURL", pin.mediaURL)
            json.field("uniqueKey", pin.uniqueKey)
            json.field("updatedAt", pin.updatedAt)
        case .poi(let poi):
            json.field("name", poi.name)
            json.field("category", poi.category)
        }
        json.endObject()
        json.endObject()
        return json.withBytes { String(decoding: $0, as: UTF8.self) }
    }
}

extension Fence {
    /// The definition as kept and answered: `{"id", "area": {…}, "detect": [...], "kind", "categories", "webhook"}`.
    public var json: String {
        var area: [String: Any]
        switch self.area {
        case .circle(let center, let radius): area = ["type": "circle", "lat": center.latitude, "lon": center.longitude, "radius": radius]
        case .box(let box): area = ["type": "bbox", "bbox": [box.west, box.south, box.east, box.north]]
        case .polygon(let polygon): area = ["type": "polygon", "coordinates": polygon.vertices.map { [$0.longitude, $0.latitude] }]
        }
        var object: [String: Any] = ["id": id, "area": area, "detect": detect.map(\.rawValue), "kind": kind.rawValue, "categories": categories]
        if let webhook { object["webhook"] = webhook }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// A definition from its JSON (a request body, or what the store kept), each field checked: the error names the
    /// field and its rule. `id`, when given, wins over the body's.
    public init(json text: String, id given: String? = nil) throws(SearchError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw .invalid(parameter: "body", rule: "must be a JSON object")
        }
        func invalid(_ field: String, _ rule: String) -> SearchError { .invalid(parameter: field, rule: rule) }
        let known: Set<String> = ["id", "area", "detect", "kind", "categories", "category", "webhook"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw invalid(unknown, "is not a field of a fence (id, area, detect, kind, categories, webhook)")
        }
        let id: String
        if let given {
            id = given
        } else if let value = object["id"] {
            guard let text = value as? String, Self.isValidID(text) else { throw invalid("id", Self.idRule) }
            id = text
        } else {
            id = "f_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        }
        guard let area = object["area"] as? [String: Any] else { throw invalid("area", "is required: an object with type circle, bbox or polygon") }
        func number(_ value: Any?) -> Double? {
            guard let value, !(value is Bool) || type(of: value) != Bool.self else { return nil }
            let d: Double?
            switch value {
            case let v as Double: d = v
            case let v as Int: d = Double(v)
            case let v as NSNumber: d = v.doubleValue
            default: d = nil
            }
            return d.flatMap { $0.isFinite ? $0 : nil }
        }
        let parsedArea: Area
        switch area["type"] as? String {
        case "circle":
            guard let lat = number(area["lat"]), (-90...90).contains(lat) else { throw invalid("area.lat", "must be a number between -90 and 90") }
            guard let lon = number(area["lon"]), (-180...180).contains(lon) else {
                throw invalid("area.lon", "must be a number between -180 and 180")
            }
            guard let radius = number(area["radius"]), radius > 0, radius <= 1_000_000 else {
                throw invalid("area.radius", "must be a number of metres above 0 and at most 1000000")
            }
            parsedArea = .circle(center: Coordinate(uncheckedLatitude: lat, longitude: lon), radius: radius)
        case "bbox":
            guard let values = area["bbox"] as? [Any], values.count == 4, case let numbers = values.compactMap(number), numbers.count == 4 else {
                throw invalid("area.bbox", "must be [west, south, east, north] in degrees")
            }
            do {
                parsedArea = .box(try BoundingBox(west: numbers[0], south: numbers[1], east: numbers[2], north: numbers[3]))
            } catch {
                throw invalid("area.bbox", error.rule)
            }
        case "polygon":
            guard let rings = area["coordinates"] as? [Any], (3...1000).contains(rings.count) else {
                throw invalid("area.coordinates", "must be 3 to 1000 [lon, lat] vertices")
            }
            var vertices: [Coordinate] = []
            for (i, vertex) in rings.enumerated() {
                guard let pair = vertex as? [Any], pair.count == 2, let lon = number(pair[0]), let lat = number(pair[1]),
                    let c = try? Coordinate(latitude: lat, longitude: lon)
                else { throw invalid("area.coordinates", "vertex \(i + 1) must be [lon, lat] with lon in -180…180 and lat in -90…90") }
                vertices.append(c)
            }
            do { parsedArea = .polygon(try Polygon(vertices: vertices)) } catch { throw invalid("area.coordinates", error.rule) }
        default:
            throw invalid("area.type", "must be circle, bbox or polygon")
        }
        var detect: [Detect] = [.enter, .exit]
        if let value = object["detect"] {
            guard let names = value as? [Any], !names.isEmpty,
                case let parsed = names.compactMap({ ($0 as? String).flatMap(Detect.init(rawValue:)) }),
                parsed.count == names.count
            else { throw invalid("detect", "must be a non-empty list of enter, exit and inside") }
            detect = parsed
        }
        var kind = KindFilter.pin
        if let value = object["kind"] {
            guard let text = value as? String, let parsed = KindFilter(rawValue: text) else { throw invalid("kind", "must be poi, pin or all") }
            kind = parsed
        }
        var categories: [String] = []
        for key in ["category", "categories"] {
            guard let value = object[key] else { continue }
            let list = (value as? [Any]) ?? [value]
            for item in list {
                guard let text = item as? String, !text.isEmpty, text.count <= 100 else {
                    throw invalid(key, "must be category paths such as food.cafe")
                }
                categories.append(text)
            }
        }
        var webhook: String?
        if let value = object["webhook"] {
            guard let text = value as? String, let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil,
                text.utf8.count <= 2000
            else { throw invalid("webhook", "must be an absolute http(s) URL") }
            webhook = text
        }
        self.init(id: id, area: parsedArea, detect: detect, kind: kind, categories: categories, webhook: webhook)
    }

    static let idRule = "must be 1 to 200 characters of letters, digits, '-', '_' and '.'"

    public static func isValidID(_ id: String) -> Bool {
        (1...200).contains(id.utf8.count)
            && id.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: ".")
            }
    }
}
