import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import Gazetteer

/// The POIs' own houses laid over an extract's address index answer as one index built from both would: the
/// extract's houses a record overrides gone, the records' houses in.
@Suite struct AddressBookTests {
    static let streets = ["Koivukatu", "Kirkkotie", "Mannerheimintie", "Rantatie", "Bulevardi"]
    static let metres = 1 / (GreatCircle.earthRadius * .pi / 180)
    /// Numbers from here up are a record's former numbers: never its house's now.
    static let staleNumber = 5_000

    static func position(street s: Int, number n: Int) -> Coordinate2 {
        let lat = 60.2 + Double(s) * 0.004
        return Coordinate2(lat + (n % 2 == 0 ? 14 : -14) * metres, 24.9 + Double(n) * 11 * metres / cos(lat * .pi / 180))
    }

    /// Seeded: an extract's houses (numbers 1–60, some missing) and street lines; records that override some of its
    /// houses with another number (or a list of two), and records with new houses on its streets and on a street of
    /// their own. A number is on a street at most once in the union, so that no answer rests on a tie.
    static func draw(_ random: inout SplitMix64) -> (base: AddressData, records: [String: [AddressPoint]]) {
        var base = AddressData()
        var used: [Set<Int>] = Array(repeating: [], count: streets.count + 1)
        for (s, name) in streets.enumerated() {
            for n in 1...60 where random.next() % 3 != 0 {
                let p = position(street: s, number: n)
                let kind = random.next() % 2 == 0 ? "n" : "w"
                base.addresses.append(
                    AddressPoint(
                        id: "osm-\(kind)\(s * 100 + n)",
                        street: name,
                        housenumber: "\(n)",
                        city: "Testby",
                        latitude: p.latitude,
                        longitude: p.longitude
                    )
                )
                used[s].insert(n)
            }
            let west = position(street: s, number: 0)
            let east = position(street: s, number: 70)
            base.streets.append(StreetLine(id: "osm-w\(9_000 + s)", names: [name], points: [west, east], city: "Testby"))
        }
        func free(_ s: Int) -> Int? { (61...200).shuffled(using: &random).first { !used[s].contains($0) } }
        var records: [String: [AddressPoint]] = [:]
        func record(_ id: String, street s: Int, numbers: [Int]) {
            let name = s < streets.count ? streets[s] : "Uusikatu"
            let tags = [
                "addr:housenumber": numbers.map(String.init).joined(separator: ";"), "addr:street": name,
            ]
            let p = position(street: s, number: numbers[0])
            records[id] = AddressPoint.houses(id: id, tags: tags, city: "Testby", latitude: p.latitude, longitude: p.longitude)
            for n in numbers { used[s].insert(n) }
        }
        // Overrides: an extract house moved to a number of its own (its old number goes with it).
        for house in base.addresses.shuffled(using: &random).prefix(25) {
            let s = streets.firstIndex(of: house.street!)!
            guard let n = free(s) else { continue }
            if random.next() % 4 == 0, let m = (n + 1...n + 40).first(where: { !used[s].contains($0) }) {
                record(house.id, street: s, numbers: [n, m])
            } else {
                record(house.id, street: s, numbers: [n])
            }
        }
        // New houses, on the extract's streets and on a street it does not have.
        for k in 0..<30 {
            let s = Int(random.next() % UInt64(streets.count + 1))
            guard let n = free(s) else { continue }
            record("poi-\(k)", street: s, numbers: [n])
        }
        return (base, records)
    }

    /// The records' houses in two layers: some settled as they are, some settled with numbers they no longer have
    /// (`staleNumber`, at the same places), then changed (a change may put back what was settled, or take a record's
    /// houses away and give them back).
    static func layered(_ records: [String: [AddressPoint]], _ random: inout SplitMix64) -> RecordHouses {
        var layers = RecordHouses()
        for (k, id) in records.keys.sorted().enumerated() {
            switch random.next() % 3 {
            case 0: layers.set(id, records[id]!)
            case 1:
                layers.set(
                    id,
                    records[id]!.map {
                        var stale = $0
                        stale.housenumber = "\(staleNumber + k)"
                        return stale
                    }
                )
            default: break
            }
        }
        layers.settle()
        for id in records.keys.sorted() {
            switch random.next() % 4 {
            case 0: layers.set(id, [])
            case 1: layers.set(id, Array(records[id]!.reversed()))
            default: break
            }
            layers.set(id, records[id]!)
        }
        #expect(!layers.settled.isEmpty && !layers.recent.isEmpty, "both layers hold houses")
        return layers
    }

    /// The single index the book stands for.
    static func combined(_ base: AddressData, _ records: [String: [AddressPoint]]) -> AddressIndex {
        let overridden = Set(records.keys)
        var data = base
        data.addresses = HouseList(
            base.addresses.filter { house in
                !overridden.contains(house.id.split(separator: "#")[0].description)
            }
        )
        data.addresses.append(contentsOf: records.keys.sorted().flatMap { records[$0]! })
        return AddressIndex(data)
    }

    static func summary(_ match: AddressMatch?) -> String {
        guard let match else { return "none" }
        return match.kind == .house ? "house \(match.id) \(match.street) \(match.housenumber ?? "")" : "\(match.kind) \(match.street)"
    }

    @Test func forwardAnswersAreThoseOfOneIndexOfBoth() throws {
        var random = testRandom("forwardAnswersAreThoseOfOneIndexOfBoth")
        let (base, records) = Self.draw(&random)
        let book = AddressBook(base: AddressIndex(base), records: Self.layered(records, &random))
        let oracle = Self.combined(base, records)
        // Half the queries ask a house of either (the base's may be overridden), half any number, some only a street.
        let every = base.addresses + records.values.flatMap { $0 }
        var houses = 0
        for _ in 0..<400 {
            let s = Int(random.next() % UInt64(Self.streets.count + 1))
            let name = s < Self.streets.count ? Self.streets[s] : "Uusikatu"
            let house = every[Int(random.next() % UInt64(every.count))]
            let text =
                random.next() % 2 == 0
                ? "\(house.street!) \(house.housenumber)" : (random.next() % 8 == 0 ? name : "\(name) \(1 + random.next() % 200)")
            let query = try GeocodeQuery(text: text, limit: 3)
            let found = book.search(query) { _, _ in nil }.first
            let expected = oracle.search(query) { _, _ in nil }.first
            #expect(Self.summary(found) == Self.summary(expected), "\(text)")
            if found?.kind == .house { houses += 1 }
        }
        #expect(houses > 100, "the queries reach houses: \(houses)")
        // Every record's house is found by its own address, and an overridden house is not found by its old one.
        for (id, own) in records {
            for house in own {
                let top = book.search(try GeocodeQuery(text: "\(house.street!) \(house.housenumber)", limit: 1)) { _, _ in nil }.first
                #expect(top?.id == house.id, "\(id): \(house.street!) \(house.housenumber)")
            }
            for stale in book.records.settled[id] ?? [] where Int(stale.housenumber)! >= Self.staleNumber {
                let top = book.search(try GeocodeQuery(text: "\(stale.street!) \(stale.housenumber)", limit: 1)) { _, _ in nil }.first
                #expect(top?.kind != .house, "\(id) no longer at \(stale.street!) \(stale.housenumber): \(Self.summary(top))")
            }
            if let old = base.addresses.first(where: { $0.id == id }) {
                let top = book.search(try GeocodeQuery(text: "\(old.street!) \(old.housenumber)", limit: 1)) { _, _ in nil }.first
                #expect(top?.kind != .house, "\(id) no longer at \(old.street!) \(old.housenumber): \(Self.summary(top))")
            }
        }
    }

    @Test func reverseAnswersAreThoseOfOneIndexOfBoth() {
        var random = testRandom("reverseAnswersAreThoseOfOneIndexOfBoth")
        let (base, records) = Self.draw(&random)
        let book = AddressBook(base: AddressIndex(base), records: Self.layered(records, &random))
        let oracle = Self.combined(base, records)
        var recordAnswers = 0
        for _ in 0..<600 {
            let s = Int(random.next() % UInt64(Self.streets.count + 1))
            // A point off a number's place by a fraction drawn from a continuous range: one at the place of a
            // missing number is exactly as far from its two neighbours, a tie the two would break differently (the
            // book by id, the one index by import order).
            let p = Self.position(street: s, number: Int(random.next() % 200))
            let along = random.uniform(0.05...0.45) * (random.next() % 2 == 0 ? 11 : -11) * Self.metres / cos(p.latitude * .pi / 180)
            let point = Coordinate2(p.latitude + random.uniform(-40...40) * Self.metres, p.longitude + along)
            let found = book.reverse(point)
            let expected = oracle.reverse(point)
            #expect(Self.summary(found?.match) == Self.summary(expected?.match), "\(point)")
            if let found, let expected { #expect(abs(found.distance - expected.distance) < 1e-6) }
            if let id = found?.match.id, records[id.split(separator: "#")[0].description] != nil { recordAnswers += 1 }
        }
        #expect(recordAnswers > 20, "the points reach the records' houses: \(recordAnswers)")
    }

    @Test func aRecordsHousesComeFromItsAddressTags() {
        let tags = ["addr:housenumber": " 13 ; 15A", "addr:street": "Mannerheimintie ", "addr:postcode": "00100", "addr:unit": "B"]
        let houses = AddressPoint.houses(id: "p1", tags: tags, city: "Helsinki", latitude: 60.17, longitude: 24.94)
        #expect(houses.map(\.id) == ["p1", "p1#2"])
        #expect(houses.map(\.housenumber) == ["13", "15A"])
        #expect(houses.allSatisfy { $0.street == "Mannerheimintie" && $0.postcode == "00100" && $0.unit == "B" && $0.city == "Helsinki" })
        let place = AddressPoint.houses(
            id: "p2",
            tags: ["addr:housenumber": "3", "addr:place": "Saari", "addr:city": "Espoo"],
            city: "Helsinki",
            latitude: 60,
            longitude: 24
        )
        #expect(place.map(\.place) == ["Saari"] && place.map(\.city) == ["Espoo"])
        #expect(AddressPoint.houses(id: "p3", tags: ["addr:housenumber": "3"], city: nil, latitude: 60, longitude: 24).isEmpty)
        #expect(AddressPoint.houses(id: "p4", tags: ["addr:street": "Bulevardi"], city: nil, latitude: 60, longitude: 24).isEmpty)
        #expect(
            AddressPoint.houses(id: "p5", tags: ["addr:housenumber": " ; ", "addr:street": "Bulevardi"], city: nil, latitude: 60, longitude: 24)
                .isEmpty
        )
    }
}
