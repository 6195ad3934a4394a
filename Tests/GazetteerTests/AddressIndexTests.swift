import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import Gazetteer

/// The address index on synthetic streets, against brute force: house lookup, interpolation between neighbouring
/// numbers and along `addr:interpolation` lines, nearest street by segment distance, and query parsing.
@Suite struct AddressIndexTests {
    /// The typo index hashes one-deletion variants without making them: the hashes are those of the strings made
    /// the slow way, for ASCII, Latin, Chinese and mixed names (and none for names of one character).
    @Test func oneDeletionHashesAreTheVariantsHashes() {
        var random = testRandom("oneDeletionHashesAreTheVariantsHashes")
        let alphabet = Array("abcdeäöåé中山路號 -")
        for length in 0..<14 {
            for _ in 0..<40 {
                let word = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
                var hashes: [UInt64] = []
                AddressIndex.forEachOneDeletion(of: word) { hashes.append($0) }
                #expect(Set(hashes) == Set(AddressIndex.oneDeletions(word).map(FNV1a.hash)), "\(word)")
                #expect(hashes.count == (word.unicodeScalars.count >= 2 ? word.unicodeScalars.count : 0), "\(word)")
            }
        }
    }

    static func query(_ text: String, limit: Int = 5) -> GeocodeQuery { try! GeocodeQuery(text: text, limit: limit) }

    @Test func houseNumbersParse() throws {
        let a = try #require(HouseNumber("13 A"))
        #expect(a.key == "13a" && a.number == 13 && a.letters == "a" && a.last == 13)
        let range = try #require(HouseNumber("13–15"))
        #expect(range.key == "13-15" && range.number == 13 && range.last == 15)
        #expect(range.covers(HouseNumber("14")!) && !range.covers(HouseNumber("16")!))
        #expect(HouseNumber("A13") == nil && HouseNumber("") == nil)
    }

    @Test func queriesAreTakenApart() {
        let finnish = ParsedAddress.parse("Mannerheimintie 13 a 5, 00100 Helsinki")
        // Every number-like word is read as the house number in turn, and the whole text as a street (a street's name
        // may hold a number: "Calle 13"); the street index decides which streets exist.
        #expect(finnish.map(\.street) == ["Mannerheimintie", "Mannerheimintie 13 a", "Mannerheimintie 13 a 5"])
        #expect(finnish.map { $0.number?.key } == ["13a", "5", nil])
        #expect(finnish.first?.street == "Mannerheimintie" && finnish.first?.number?.key == "13a" && finnish.first?.unit == "5")
        #expect(finnish.first?.postcode == "00100" && finnish.first?.qualifiers == ["helsinki"])
        let english = ParsedAddress.parse("13 Main Street")
        #expect(english.first?.street == "Main Street" && english.first?.number?.number == 13)
        let chinese = ParsedAddress.parse("北京市朝阳区建国路5号")
        #expect(chinese.first?.street == "北京市朝阳区建国路" && chinese.first?.number?.number == 5 && chinese.first?.streetIsSuffix == true)
        let bare = ParsedAddress.parse("Bulevardi")
        #expect(bare.first?.street == "Bulevardi" && bare.first?.number == nil)
    }

    /// A straight east-west street at `latitude` from `west` eastwards, 20 m between consecutive numbers.
    static func street(_ name: String, latitude: Double, west: Double, numbers: [Int], city: String = "Testby") -> ([AddressPoint], StreetLine) {
        let metresPerDegree = GreatCircle.earthRadius * .pi / 180 * cos(latitude * .pi / 180)
        let houses = numbers.map { n in
            AddressPoint(
                id: "h-\(name)-\(n)",
                street: name,
                housenumber: String(n),
                postcode: "99999",
                city: city,
                latitude: latitude + (n % 2 == 0 ? 0.0001 : -0.0001),
                longitude: west + Double(n) * 10 / metresPerDegree
            )
        }
        let line = StreetLine(
            id: "l-\(name)",
            names: [name, name + "vägen"],
            points: stride(from: 0, through: 200, by: 50).map { Coordinate2(latitude, west + Double($0) * 10 / metresPerDegree) }
        )
        return (houses, line)
    }

    @Test func missingNumbersAreInterpolatedBetweenNeighboursLikeBruteForce() throws {
        var random = SplitMix64(seed: testSeed("missingNumbersAreInterpolatedBetweenNeighboursLikeBruteForce"))
        let all = Array(1...120)
        let present = all.filter { _ in random.next() % 3 != 0 }
        let (houses, line) = Self.street("Koivukatu", latitude: 60.2, west: 24.9, numbers: present)
        let index = AddressIndex(AddressData(addresses: houses, streets: [line]))
        for missing in all where !present.contains(missing) {
            let match = try #require(index.search(Self.query("Koivukatu \(missing)")) { _, _ in nil }.first)
            // The oracle: nearest lower and higher numbers of the same parity (else any), linear in the number.
            let parity = houses.filter { Int($0.housenumber)! % 2 == missing % 2 }
            func bracket(_ pool: [AddressPoint]) -> (AddressPoint, AddressPoint)? {
                guard let low = pool.filter({ Int($0.housenumber)! < missing }).max(by: { Int($0.housenumber)! < Int($1.housenumber)! }),
                    let high = pool.filter({ Int($0.housenumber)! > missing }).min(by: { Int($0.housenumber)! < Int($1.housenumber)! })
                else { return nil }
                return (low, high)
            }
            guard let (low, high) = bracket(parity) ?? bracket(houses) else {
                #expect(match.kind == .street && match.interpolation == nil, "\(missing): no numbers on both sides, the street's own point")
                continue
            }
            let t = Double(missing - Int(low.housenumber)!) / Double(Int(high.housenumber)! - Int(low.housenumber)!)
            let expected = Coordinate2(low.latitude + t * (high.latitude - low.latitude), low.longitude + t * (high.longitude - low.longitude))
            #expect(match.kind == .street && match.interpolation == "neighbours" && match.unresolved == String(missing))
            #expect(AddressIndex.distance(expected, Coordinate2(match.latitude, match.longitude)) < 0.01, "number \(missing)")
        }
    }

    @Test func interpolationLinesPlaceNumbersByLength() throws {
        // An L-shaped even line from 2 to 22: 100 m east, then 100 m north.
        let lat = 60.3
        let lon = 25.0
        let east = 100 / (GreatCircle.earthRadius * .pi / 180 * cos(lat * .pi / 180))
        let north = 100 / (GreatCircle.earthRadius * .pi / 180)
        let points = [Coordinate2(lat, lon), Coordinate2(lat, lon + east), Coordinate2(lat + north, lon + east)]
        let line = StreetLine(
            id: "i-1",
            kind: .even,
            names: ["Tammitie"],
            points: points,
            numbers: [NumberedVertex(vertex: 0, number: 2), NumberedVertex(vertex: 2, number: 22)]
        )
        let ends = [
            AddressPoint(id: "a", street: "Tammitie", housenumber: "2", latitude: lat, longitude: lon),
            AddressPoint(id: "b", street: "Tammitie", housenumber: "22", latitude: lat + north, longitude: lon + east),
        ]
        let index = AddressIndex(AddressData(addresses: ends, streets: [line]))
        for number in stride(from: 4, through: 20, by: 2) {
            let match = try #require(index.search(Self.query("Tammitie \(number)")) { _, _ in nil }.first)
            #expect(match.interpolation == "line")
            // Brute force: walk the polyline (number - 2) / 20 of its 200 m.
            let along = Double(number - 2) / 20 * 200
            let expected = along <= 100 ? Coordinate2(lat, lon + east * along / 100) : Coordinate2(lat + north * (along - 100) / 100, lon + east)
            #expect(AddressIndex.distance(expected, Coordinate2(match.latitude, match.longitude)) < 0.5, "number \(number)")
        }
        let odd = try #require(index.search(Self.query("Tammitie 7")) { _, _ in nil }.first)
        #expect(odd.interpolation != "line", "an even line does not place an odd number")
    }

    @Test func housesVariantsTyposAndStreets() throws {
        let (houses, line) = Self.street("Koivukatu", latitude: 60.2, west: 24.9, numbers: Array(1...30))
        let (others, otherLine) = Self.street("Kirkkotie", latitude: 60.25, west: 24.95, numbers: [1, 2, 3])
        let index = AddressIndex(AddressData(addresses: houses + others, streets: [line, otherLine]))
        let exact = try #require(index.search(Self.query("koivukatu 12, testby")) { _, _ in nil }.first)
        #expect(exact.kind == .house && exact.housenumber == "12" && exact.id == "h-Koivukatu-12")
        let variant = try #require(index.search(Self.query("Koivukatuvägen 12")) { _, _ in nil }.first)
        #expect(variant.id == "h-Koivukatu-12", "the line's other-language name finds the street's houses")
        let typo = try #require(index.search(Self.query("Koivukatv 12")) { _, _ in nil }.first)
        #expect(typo.id == "h-Koivukatu-12" && typo.score < exact.score)
        let lettered = try #require(index.search(Self.query("Koivukatu 12 B")) { _, _ in nil }.first)
        #expect(lettered.id == "h-Koivukatu-12" && lettered.score < exact.score, "13B missing: 13 answers, ranked lower")
        let street = try #require(index.search(Self.query("Koivukatu")) { _, _ in nil }.first)
        #expect(street.kind == .street)
        let (onLine, d) = try #require(Self.nearestOnLine(Coordinate2(street.latitude, street.longitude), line))
        #expect(d < 0.5, "a street answer lies on its line (\(onLine))")
        // A qualifier naming a place far away pushes the house below one without it.
        let far = try #require(index.search(Self.query("Koivukatu 12, Farville")) { name, _ in name == "farville" ? false : nil }.first)
        #expect(far.score < exact.score - 0.5)
    }

    /// A street renamed: its lines keep the old name (`old_name`), which another street now bears. The street whose
    /// own name was asked comes first — for the street, its houses, and a typo of it — though the renamed one's id
    /// sorts first and its houses have the same numbers.
    @Test func aStreetsOwnNameLeadsAnotherStreetsFormerName() throws {
        let (houses, line) = Self.street("Puutarhakatu", latitude: 60.2, west: 24.9, numbers: Array(1...5))
        let (renamed, formerLine) = Self.street("Aleksinkatu", latitude: 60.21, west: 24.9, numbers: Array(1...5))
        var renamedLine = formerLine
        renamedLine.names.append("Puutarhakatu")
        let index = AddressIndex(AddressData(addresses: houses + renamed, streets: [line, renamedLine]))
        for text in ["Puutarhakatu", "Puutarhakatu 3", "Puutarhakaty 3", "puutarhakatu 3, testby"] {
            let found = index.search(Self.query(text)) { _, _ in nil }
            #expect(found.first?.street == "Puutarhakatu", "\(text): \(found.map { "\($0.street) \($0.housenumber ?? "")" })")
            #expect(found.contains { $0.street == "Aleksinkatu" }, "\(text): the renamed street is still found by its former name")
        }
    }

    static func nearestOnLine(_ p: Coordinate2, _ line: StreetLine) -> (Coordinate2, Double)? {
        let scale = GreatCircle.earthRadius * .pi / 180
        let cosine = cos(p.latitude * .pi / 180)
        var best: (Coordinate2, Double)?
        for i in 1..<line.points.count {
            let r = SegmentGrid.project(p, line.points[i - 1], line.points[i], cosine: cosine, scale: scale)
            if r.1 < best?.1 ?? .infinity { best = r }
        }
        return best
    }

    @Test func reverseAnswersTheNearestHouseElseTheNearestStreetSegment() throws {
        var random = SplitMix64(seed: testSeed("reverseAnswersTheNearestHouseElseTheNearestStreetSegment"))
        let (houses, line) = Self.street("Koivukatu", latitude: 60.2, west: 24.9, numbers: Array(1...10))
        let (_, bare) = Self.street("Pajukuja", latitude: 60.2015, west: 24.9, numbers: [])
        let index = AddressIndex(AddressData(addresses: houses, streets: [line, bare]))
        for _ in 0..<300 {
            let p = Coordinate2(60.199 + Double(random.next() % 10_000) / 10_000 * 0.004, 24.899 + Double(random.next() % 10_000) / 10_000 * 0.006)
            let answer = index.reverse(p)
            let nearestHouse = houses.map { ($0, AddressIndex.distance(p, Coordinate2($0.latitude, $0.longitude))) }.min { $0.1 < $1.1 }!
            if nearestHouse.1 <= AddressIndex.houseRadius {
                #expect(answer?.match.kind == .house && abs(answer!.distance - nearestHouse.1) < 0.05, "\(p)")
                continue
            }
            let streets = [line, bare].compactMap { l in Self.nearestOnLine(p, l).map { (l, $0.1) } }.min { $0.1 < $1.1 }!
            if streets.1 <= AddressIndex.streetRadius {
                #expect(answer?.match.kind == .street && answer?.match.id == streets.0.id && abs(answer!.distance - streets.1) < 0.05, "\(p)")
            } else {
                #expect(answer == nil, "\(p): nothing within the radii")
            }
        }
    }
}
