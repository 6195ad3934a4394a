import BundledData
import CPrefetch
import Records
import SnapshotFile

/// The records by number, packed: every POI's strings (id, name, address, tags as JSON) live in one shared byte
/// buffer, categories, cities and countries are interned, and a record becomes a `Hit.Record` only when it is read
/// — for the few records of an answer. Held as Swift structs, a POI cost about 330 bytes of separate allocations
/// (its box, its strings, its tags dictionary); here it is a 40-byte slot plus its bytes. A POI's coordinates are
/// not kept here but in the engine's `RecordMeta`, which the caller passes in when a record is read: a search
/// touches every slot of its answers, and at 1 M records the 16 bytes of a second copy were 16 MB resident.
///
/// Pins, written one at a time by users and few, are kept whole. Replacing a POI appends its new bytes and leaves
/// the old ones unused until the engine is next loaded.
struct RecordStore: Sendable {
    // Served from the snapshot's mapping after a restart (`FlatArray`); copied to the heap by the first write.
    private var slots = FlatArray<Slot>()
    private var bytes = FlatArray<UInt8>()
    private var pins: [UInt32: PinRecord] = [:]
    private var categories = Interner()
    private var cities = Interner()
    private var countries = Interner()

    /// 40 bytes: the kind last, where it does not pad the offset.
    private struct Slot: Sendable {
        enum Kind: UInt8 { case empty, poi, pin }
        static let none = UInt32.max

        var offset = 0
        var idLength: UInt32 = 0
        var nameLength: UInt32 = 0
        var addressLength = Slot.none
        var tagsLength: UInt32 = 0
        var category: UInt32 = 0
        var city = Slot.none
        var country = Slot.none
        var kind = Kind.empty

        init(kind: Kind = .empty, offset: Int = 0) {
            self.kind = kind
            self.offset = offset
        }
    }

    /// Where a record lies: a POI's coordinates, which the store does not keep (`RecordMeta` does).
    typealias Place = (latitude: Double, longitude: Double)

    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }

    mutating func reserveCapacity(_ capacity: Int) { slots.reserveCapacity(capacity) }

    /// Numbers the first `order.count` records anew: record `order[i]` becomes record `i` (`order` a permutation of
    /// `0..<order.count`). Only slots move; the bytes stay where they are.
    mutating func reorder(_ order: [Int]) {
        var moved = slots
        for (new, old) in order.enumerated() { moved[new] = slots[old] }
        slots = moved
        // A bulk load reorders before its pins are added: usually there is none to move.
        guard !pins.isEmpty else { return }
        var numbers = [UInt32](repeating: 0, count: order.count)
        for (new, old) in order.enumerated() { numbers[old] = UInt32(new) }
        pins = Dictionary(uniqueKeysWithValues: pins.map { (Int($0.key) < numbers.count ? numbers[Int($0.key)] : $0.key, $0.value) })
    }

    mutating func append(_ record: Hit.Record?) {
        slots.append(Slot())
        set(slots.count - 1, record)
    }

    /// Record `number`; a POI lies at `place` (its `RecordMeta`'s coordinates).
    func record(_ number: Int, at place: Place) -> Hit.Record? {
        let slot = slots[number]
        switch slot.kind {
        case .empty: return nil
        case .pin: return pins[UInt32(number)].map { .pin($0) }
        case .poi: return .poi(packed(slot, at: place).record)
        }
    }

    /// Replaces record `number` (nil: none).
    mutating func set(_ number: Int, _ record: Hit.Record?) {
        if slots[number].kind == .pin { pins[UInt32(number)] = nil }
        switch record {
        case nil: slots[number] = Slot()
        case .pin(let pin)?:
            slots[number] = Slot(kind: .pin)
            pins[UInt32(number)] = pin
        case .poi(let poi)?: slots[number] = pack(poi)
        }
    }

    private mutating func pack(_ poi: POIRecord) -> Slot {
        var slot = Slot(kind: .poi, offset: bytes.count)
        slot.idLength = append(poi.id)
        slot.nameLength = append(poi.name)
        if let address = poi.address { slot.addressLength = append(address) }
        if !poi.tags.isEmpty {
            var json = JSONWriter()
            TagsJSON.write(poi.tags, to: &json)
            bytes.append(contentsOf: json.buffer)
            slot.tagsLength = UInt32(json.buffer.count)
        }
        slot.category = categories.code(poi.category)
        if let city = poi.city { slot.city = cities.code(city) }
        if let country = poi.country { slot.country = countries.code(country) }
        return slot
    }

    private mutating func append(_ text: String) -> UInt32 {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        return UInt32(bytes.count - start)
    }

    /// Whether record `number` is a POI whose id is `id` (compared as bytes, no string made).
    func poi(_ number: UInt32, hasID id: String) -> Bool {
        guard Int(number) < slots.count else { return false }
        let slot = slots[Int(number)]
        guard slot.kind == .poi else { return false }
        var id = id
        return id.withUTF8 { wanted in
            wanted.count == Int(slot.idLength)
                && bytes.withUnsafeBufferPointer { all in
                    UnsafeBufferPointer(rebasing: all[slot.offset..<slot.offset + wanted.count]).elementsEqual(wanted)
                }
        }
    }

    /// Ids of the POIs whose id starts with `prefix`. - Complexity: O(records).
    func poiIDs(prefix: String) -> [String] {
        let wanted = Array(prefix.utf8)
        var out: [String] = []
        bytes.withUnsafeBufferPointer { all in
            for slot in slots where slot.kind == .poi && Int(slot.idLength) >= wanted.count {
                let id = UnsafeBufferPointer(rebasing: all[slot.offset..<slot.offset + Int(slot.idLength)])
                if id.starts(with: wanted) { out.append(String(decoding: id, as: UTF8.self)) }
            }
        }
        return out
    }

    /// A POI's name alone (ranking compares names of many candidates; making whole records would dominate).
    func poiName(_ number: Int) -> String? {
        let slot = slots[number]
        guard slot.kind == .poi else { return nil }
        let start = slot.offset + Int(slot.idLength)
        return bytes.withUnsafeBufferPointer { all in
            String(decoding: UnsafeBufferPointer(rebasing: all[start..<start + Int(slot.nameLength)]), as: UTF8.self)
        }
    }

    /// A POI's id and name as the store's own bytes, for a writer that copies them at once (a vector tile): valid
    /// while the store is alive and not mutated, that is inside the engine's read lock. Nil for a pin or a gap.
    func poiIDAndName(_ number: Int) -> (id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>)? {
        let slot = slots[number]
        guard slot.kind == .poi, let base = bytes.baseAddress else { return nil }
        let id = UnsafeBufferPointer(start: base + slot.offset, count: Int(slot.idLength))
        return (id, UnsafeBufferPointer(start: base + slot.offset + Int(slot.idLength), count: Int(slot.nameLength)))
    }

    /// A POI as a copy of its own bytes, for an answer: encoding writes straight from them, and the full record is
    /// made only if someone asks for it.
    func packed(_ number: Int, at place: Place) -> PackedPOI? {
        let slot = slots[number]
        return slot.kind == .poi ? packed(slot, at: place) : nil
    }

    private func packed(_ slot: Slot, at place: Place) -> PackedPOI {
        let address = slot.addressLength == Slot.none ? nil : Int(slot.addressLength)
        let recordLength = Int(slot.idLength) + Int(slot.nameLength) + (address ?? 0) + Int(slot.tagsLength)
        let hasCity = slot.city != Slot.none
        let hasCountry = slot.country != Slot.none
        let lengths = PackedPOI.Lengths(
            id: Int(slot.idLength),
            name: Int(slot.nameLength),
            address: address,
            tags: Int(slot.tagsLength),
            category: categories.utf8Count(slot.category),
            city: hasCity ? cities.utf8Count(slot.city) : nil,
            country: hasCountry ? countries.utf8Count(slot.country) : nil
        )
        // One allocation, filled part after part. (Zeroed first: the initializer that leaves the bytes uninitialized
        // is not specialized here and looked up generic metadata on every call.)
        var packed = [UInt8](repeating: 0, count: lengths.total)
        packed.withUnsafeMutableBufferPointer { buffer in
            guard var at = buffer.baseAddress else { return }
            if recordLength > 0 {
                bytes.withUnsafeBufferPointer { all in at.update(from: all.baseAddress! + slot.offset, count: recordLength) }
                at += recordLength
            }
            categories.copyUTF8(slot.category, to: &at)
            if hasCity { cities.copyUTF8(slot.city, to: &at) }
            if hasCountry { countries.copyUTF8(slot.country, to: &at) }
        }
        return PackedPOI(bytes: packed, lengths: lengths, latitude: place.latitude, longitude: place.longitude)
    }

    /// Asks the cache for the slots of `numbers`, then for the start of their packed bytes, before an answer reads
    /// them one by one: the records of one answer lie far apart in the store, and with the hints their cache misses
    /// overlap instead of following one another.
    func prefetch(_ numbers: some Collection<UInt32>) {
        guard let slotBase = slots.baseAddress, let byteBase = bytes.baseAddress else { return }
        for number in numbers where Int(number) < slots.count { poi_prefetch(slotBase + Int(number)) }
        for number in numbers where Int(number) < slots.count {
            let slot = slotBase[Int(number)]
            // A record's bytes (id, name, address, tags) take one to three cache lines.
            if slot.kind == .poi, slot.offset < bytes.count {
                poi_prefetch(byteBase + slot.offset)
                poi_prefetch(byteBase + slot.offset + 64)
            }
        }
    }

    /// Whether the packed records are read from a mapped snapshot (not yet copied by a write).
    var isMapped: Bool { slots.isMapped && bytes.isMapped }

    /// Approximate bytes held (slots, packed strings, interned strings; pins not counted).
    var memoryFootprint: Int { slots.capacity * MemoryLayout<Slot>.stride + bytes.capacity }
}

/// Each distinct string once, by number; also as consecutive UTF-8 bytes, which answers copy without touching the
/// strings' reference counts.
private struct Interner: Sendable {
    private var codes: [String: UInt32] = [:]
    private(set) var strings: [String] = []
    private var bytes: [UInt8] = []
    /// Where each string's bytes start in `bytes`, and the end of the last.
    private var starts: [Int] = [0]

    init() {}

    init(strings: [String]) {
        codes.reserveCapacity(strings.count)
        for (code, string) in strings.enumerated() {
            codes[string] = UInt32(code)
            add(string)
        }
    }

    mutating func code(_ text: String) -> UInt32 {
        if let code = codes[text] { return code }
        let code = UInt32(strings.count)
        codes[text] = code
        add(text)
        return code
    }

    private mutating func add(_ text: String) {
        strings.append(text)
        bytes.append(contentsOf: text.utf8)
        starts.append(bytes.count)
    }

    /// The length of string `code` in UTF-8 bytes.
    func utf8Count(_ code: UInt32) -> Int { starts[Int(code) + 1] - starts[Int(code)] }

    /// Copies the UTF-8 bytes of string `code` over `target` and moves it past them.
    func copyUTF8(_ code: UInt32, to target: inout UnsafeMutablePointer<UInt8>) {
        let start = starts[Int(code)]
        let count = starts[Int(code) + 1] - start
        guard count > 0 else { return }  // (an empty string: `bytes` may still be empty, without a base address)
        bytes.withUnsafeBufferPointer { target.update(from: $0.baseAddress! + start, count: count) }
        target += count
    }
}

extension RecordStore {
    func write(to snapshot: SnapshotWriter) throws(SnapshotError) {
        snapshot.mark()
        try snapshot.write(slots)
        try snapshot.write(bytes)
        try snapshot.write(categories.strings)
        try snapshot.write(cities.strings)
        try snapshot.write(countries.strings)
        let numbers = pins.keys.sorted()
        let list = numbers.map { pins[$0]! }
        try snapshot.write(numbers)
        for column in [\PinRecord.id, \.uniqueKey, \.firstName, \.lastName, \.mapString, \.mediaURL, \.createdAt, \.updatedAt] {
            try snapshot.write(list.map { $0[keyPath: column] })
        }
        try snapshot.write(list.map(\.lat))
        try snapshot.write(list.map(\.lon))
        // Owners are tokens' `sub`s, never empty: "" stands for none.
        try snapshot.write(list.map { $0.owner ?? "" })
    }

    init(snapshot: SnapshotReader) throws(SnapshotError) {
        self.init()
        slots = try snapshot.readFlat()
        bytes = try snapshot.readFlat()
        categories = Interner(strings: try snapshot.readStrings())
        cities = Interner(strings: try snapshot.readStrings())
        countries = Interner(strings: try snapshot.readStrings())
        let numbers: [UInt32] = try snapshot.read()
        var columns: [[String]] = []
        for _ in 0..<8 { columns.append(try snapshot.readStrings()) }
        let latitudes: [Double] = try snapshot.read()
        let longitudes: [Double] = try snapshot.read()
        let owners = try snapshot.readStrings()
        guard columns.allSatisfy({ $0.count == numbers.count }), latitudes.count == numbers.count, longitudes.count == numbers.count,
            owners.count == numbers.count
        else {
            throw .corrupt(path: snapshot.path, reason: "pin columns of different lengths")
        }
        for (i, number) in numbers.enumerated() {
            guard Int(number) < slots.count, slots[Int(number)].kind == .pin else {
                throw .corrupt(path: snapshot.path, reason: "a pin without its slot")
            }
            pins[number] = PinRecord(
                id: columns[0][i],
                uniqueKey: columns[1][i],
                firstName: columns[2][i],
                lastName: columns[3][i],
                mapString: columns[4][i],
                mediaURL: columns[5][i],
                lat: latitudes[i],
                lon: longitudes[i],
                createdAt: columns[6][i],
                updatedAt: columns[7][i],
                owner: owners[i].isEmpty ? nil : owners[i]
            )
        }
        for slot in slots where slot.kind == .poi {
            let address = slot.addressLength == Slot.none ? 0 : Int(slot.addressLength)
            let end = slot.offset + Int(slot.idLength) + Int(slot.nameLength) + address + Int(slot.tagsLength)
            guard slot.offset >= 0, end <= bytes.count, Int(slot.category) < categories.strings.count,
                slot.city == Slot.none || Int(slot.city) < cities.strings.count,
                slot.country == Slot.none || Int(slot.country) < countries.strings.count
            else { throw .corrupt(path: snapshot.path, reason: "a record outside the packed bytes") }
        }
    }
}
