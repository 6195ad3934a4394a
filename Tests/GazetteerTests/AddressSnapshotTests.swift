import Foundation
import GeoCore
import Records
import SnapshotFile
import TestSupport
import Testing
import TextIndex

@testable import Gazetteer

/// The address index's snapshot: an index read back answers every query as the index it was written from, and a
/// snapshot of other addresses, another format or damaged bytes is refused, never served.
@Suite struct AddressSnapshotTests {
    /// Seeded streets in two towns, each with houses (numbers with letters and ranges, units, postcodes, nodes and
    /// buildings under one number, houses with only `addr:place`), street lines with name variants, and
    /// interpolation lines.
    static func randomData(_ random: inout SplitMix64) -> AddressData {
        let streetNames = ["Koivukatu", "Kirkkotie", "Mannerheimintie", "Rantatie", "Bulevardi", "Pajukuja", "中山路", "Ågatan"]
        let towns = [("Testby", 60.20, 24.90, "00100"), ("Farville", 61.00, 25.80, "33100")]
        var houses: [AddressPoint] = []
        var lines: [StreetLine] = []
        let metres = 1 / (GreatCircle.earthRadius * .pi / 180)
        for (town, latitude, longitude, postcode) in towns {
            for (s, name) in streetNames.enumerated() where random.next() % 4 != 0 {
                let lat = latitude + Double(s) * 0.002
                let west = longitude + Double(random.next() % 100) * 0.0001
                for n in 1...(5 + Int(random.next() % 40)) where random.next() % 5 != 0 {
                    var number = "\(n)"
                    switch random.next() % 10 {
                    case 0: number += "A"
                    case 1: number += "-\(n + 2)"
                    default: break
                    }
                    let kind = random.next() % 3 == 0 ? "n" : "w"
                    houses.append(
                        AddressPoint(
                            id: "osm-\(kind)\(houses.count + 1)",
                            street: name,
                            housenumber: number,
                            unit: random.next() % 7 == 0 ? "B \(n)" : nil,
                            postcode: random.next() % 6 == 0 ? nil : postcode,
                            city: random.next() % 5 == 0 ? nil : town,
                            latitude: lat + (n % 2 == 0 ? 15 : -15) * metres,
                            longitude: west + Double(n) * 12 * metres / cos(lat * .pi / 180)
                        )
                    )
                }
                let points = (0...(2 + Int(random.next() % 4))).map { k in
                    Coordinate2(lat + Double(random.next() % 3) * metres, west + Double(k) * 150 * metres / cos(lat * .pi / 180))
                }
                lines.append(
                    StreetLine(
                        id: "osm-w\(1_000 + lines.count)",
                        names: random.next() % 2 == 0 ? [name, name + "vägen", "Old " + name] : [name],
                        points: points,
                        city: random.next() % 2 == 0 ? town : nil,
                        postcode: random.next() % 3 == 0 ? postcode : nil
                    )
                )
                if random.next() % 3 == 0 {
                    lines.append(
                        StreetLine(
                            id: "osm-w\(1_000 + lines.count)",
                            kind: [.odd, .even, .all][Int(random.next() % 3)],
                            names: [name],
                            points: Array(points.prefix(2)),
                            numbers: [NumberedVertex(vertex: 0, number: 101), NumberedVertex(vertex: 1, number: 121)]
                        )
                    )
                }
            }
            houses.append(
                AddressPoint(
                    id: "osm-n\(houses.count + 1)",
                    street: nil,
                    place: "Saari",
                    housenumber: "3",
                    city: town,
                    latitude: latitude - 0.01,
                    longitude: longitude
                )
            )
        }
        return AddressData(addresses: houses, streets: lines)
    }

    /// What users send: houses as stored, numbers missing or beyond the interpolation lines, typos, name variants,
    /// streets alone, places, postcodes and towns after commas.
    static func queries(_ data: AddressData, _ random: inout SplitMix64) -> [String] {
        let houses = Array(data.addresses)
        var out: [String] = []
        for _ in 0..<150 {
            let house = houses[Int(random.next() % UInt64(houses.count))]
            let street = house.streetOrPlace!
            switch random.next() % 8 {
            case 0: out.append("\(street) \(house.housenumber)")
            case 1: out.append("\(street.lowercased()) \(house.housenumber), \(house.city ?? "")")
            case 2: out.append("\(street) \(Int(random.next() % 130) + 1)")
            case 3: out.append(String(street.dropLast()) + " \(house.housenumber)")
            case 4: out.append("\(street)vägen \(house.housenumber)")
            case 5: out.append(street)
            case 6: out.append("\(street) \(house.housenumber), \(house.postcode ?? "00000") Farville")
            default: out.append("Old \(street) \(Int(random.next() % 40) + 1)")
            }
        }
        return out
    }

    @Test func aSnapshotAnswersAsTheIndexItWasWrittenFrom() throws {
        var random = testRandom("aSnapshotAnswersAsTheIndexItWasWrittenFrom")
        let data = Self.randomData(&random)
        let built = AddressIndex(data)
        let scratch = ScratchDirectory("address-snapshot")
        let path = scratch.file("addresses.snapshot")
        try built.writeSnapshot(to: path, generation: "g1")
        let read = try AddressIndex.readSnapshot(path, generation: "g1")

        #expect(read.houseCount == data.addresses.count)
        for (i, house) in data.addresses.enumerated() { #expect(read.house(i) == house, "house \(i)") }
        #expect(read.lines == data.streets)
        let placeNear: (String, Coordinate2) -> Bool? = { name, point in name == "farville" ? point.latitude > 60.5 : nil }
        var houses = 0
        var streets = 0
        for text in Self.queries(data, &random) {
            let query = try GeocodeQuery(text: text, limit: 5)
            let answer = read.search(query, placeNear: placeNear)
            #expect(answer == built.search(query, placeNear: placeNear), "\(text)")
            houses += answer.first?.kind == .house ? 1 : 0
            streets += answer.first?.kind == .street ? 1 : 0
        }
        #expect(houses > 50 && streets > 20, "the queries reach houses (\(houses)) and streets (\(streets)), not only misses")
        for _ in 0..<400 {
            let town = random.next() % 2 == 0 ? (60.20, 24.90) : (61.00, 25.80)
            let p = Coordinate2(town.0 - 0.005 + random.nextUnit() * 0.025, town.1 - 0.005 + random.nextUnit() * 0.05)
            let (a, b) = (read.reverse(p), built.reverse(p))
            #expect(a?.match == b?.match && a?.distance == b?.distance, "reverse \(p)")
        }
        let box = BoundingBox(uncheckedWest: 24.9, south: 60.2, east: 24.92, north: 60.21)
        #expect(read.lines(in: box, limit: 5).lines == built.lines(in: box, limit: 5).lines)
    }

    @Test func aSnapshotOfOtherAddressesOrDamagedIsRefused() throws {
        var random = testRandom("aSnapshotOfOtherAddressesOrDamagedIsRefused")
        let scratch = ScratchDirectory("address-snapshot-refused")
        let path = scratch.file("addresses.snapshot")
        try AddressIndex(Self.randomData(&random)).writeSnapshot(to: path, generation: "g1")
        #expect(throws: SnapshotError.stale(path: path, reason: "it was written for other addresses")) {
            try AddressIndex.readSnapshot(path, generation: "g2")
        }
        #expect(throws: SnapshotError.missing(path: scratch.file("none"))) { try AddressIndex.readSnapshot(scratch.file("none"), generation: "g1") }
        // One byte changed anywhere in the payload: the checksum refuses the file.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let at = 32 + Int(random.next() % UInt64(bytes.count - 32))
        bytes[at] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: path))
        do {
            _ = try AddressIndex.readSnapshot(path, generation: "g1")
            Issue.record("a damaged snapshot (byte \(at)) was read")
        } catch {
            guard case .corrupt = error else {
                Issue.record("byte \(at): \(error)")
                return
            }
        }
    }

    /// An outline (`AddressOutline`) does not read the checksum: a snapshot damaged anywhere is refused or read with
    /// every reference in bounds — asking it everything `AddressChanges` asks never leaves its columns.
    @Test func anOutlineOfADamagedSnapshotIsRefusedOrStaysInBounds() throws {
        var random = testRandom("anOutlineOfADamagedSnapshotIsRefusedOrStaysInBounds")
        let scratch = ScratchDirectory("address-outline-damaged")
        let path = scratch.file("addresses.snapshot")
        let data = Self.randomData(&random)
        try AddressIndex(data).writeSnapshot(to: path, generation: "g1")
        #expect(throws: SnapshotError.stale(path: path, reason: "it was written for other addresses")) {
            try AddressOutline(snapshot: path, generation: "g2")
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let names = Set(data.streets.flatMap(\.names).map(TextNormalizer.normalize))
        var (refused, read) = (0, 0)
        for _ in 0..<300 {
            var bytes = whole
            let at = 32 + Int(random.next() % UInt64(bytes.count - 32))
            bytes[at] ^= UInt8(1 + random.next() % 255)
            try bytes.write(to: URL(fileURLWithPath: path))
            guard let outline = try? AddressOutline(snapshot: path, generation: "g1") else {
                refused += 1
                continue
            }
            read += 1
            _ = outline.isInObjectOrder
            for i in 0..<outline.houseCount { _ = outline.street(ofHouse: i) }
            var streets = Set<Int32>()
            for l in 0..<outline.lineCount where outline.street(ofLine: l) >= 0 { streets.insert(outline.street(ofLine: l)) }
            for s in streets {
                _ = outline.memberCount(ofStreet: s)
                _ = outline.memberCells(of: s)
            }
            for object in ["osm-n3", "osm-w1000", "osm-w1003"] {
                let key = OSMObjectKey.packed(OSMObjectKey.order(of: object)!)
                _ = (outline.houseRange(ofObject: key), outline.lineRange(ofObject: key))
            }
            for found in outline.streets(named: names).values { #expect(found.allSatisfy { $0 >= 0 }) }
        }
        #expect(refused > 0 && read > 0, "damage both refused (\(refused)) and read in bounds (\(read))")
    }

    @Test func anEmptyIndexRoundTrips() throws {
        let scratch = ScratchDirectory("address-snapshot-empty")
        let path = scratch.file("addresses.snapshot")
        try AddressIndex.empty.writeSnapshot(to: path, generation: "g")
        let read = try AddressIndex.readSnapshot(path, generation: "g")
        #expect(read.isEmpty && read.reverse(Coordinate2(60, 25)) == nil)
    }
}
