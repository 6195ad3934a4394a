import GeoCore
import Records
import TestSupport
import Testing

@testable import Gazetteer

/// An address layer's houses copied from the base as columns (`HouseTable.init(_:of:records:)`) against the table made
/// of the same houses as records: every column equal, the texts numbered in the same order.
@Suite struct HouseTableRowsTests {
    @Test func rowsOfAnotherTableAndRecordsMakeTheTableTheirRecordsMake() {
        var random = testRandom("rowsOfAnotherTableAndRecordsMakeTheTableTheirRecordsMake")
        let streets = ["Mannerheimintie", "Aleksanterinkatu", "Kirkkotie", "Пушкинская", "长安街", "Rue de l'Église"]
        let cities = ["Helsinki", "Espoo", "北京"]
        func text(_ options: [String], absentOneIn n: Int) -> String? {
            Int.random(in: 0..<n, using: &random) == 0 ? nil : options.randomElement(using: &random)!
        }
        func house(_ n: Int) -> AddressPoint {
            AddressPoint(
                id: "osm-\(["n", "w", "r"].randomElement(using: &random)!)\(n)",
                street: text(streets, absentOneIn: 5),
                place: text(["Kallio", "Töölö"], absentOneIn: 2),
                housenumber: ["1", "2a", "3-5", "10", "", "12 B"].randomElement(using: &random)!,
                unit: text(["A", "B 12"], absentOneIn: 3),
                postcode: text(["00100", "00530", "02100"], absentOneIn: 4),
                city: text(cities, absentOneIn: 6),
                latitude: random.uniform(-90...90),
                longitude: random.uniform(-180...180)
            )
        }
        for round in 0..<40 {
            let base = (0..<Int.random(in: 0...300, using: &random)).map(house)
            let source = HouseTable(base)
            let records = (0..<Int.random(in: 0...60, using: &random)).map { house(10_000 + $0) }
            var rows: [HouseTable.Row] = base.indices.filter { _ in Bool.random(using: &random) }.map { .row(Int32($0)) }
            rows += records.indices.map { .record(Int32($0)) }
            if round % 2 == 1 { rows.shuffle(using: &random) }
            let made = HouseTable(rows, of: source, records: records)
            let houses = rows.map { row -> AddressPoint in
                switch row {
                case .row(let i): base[Int(i)]
                case .record(let r): records[Int(r)]
                }
            }
            let expected = HouseTable(houses)
            #expect(made.isConsistent, "round \(round)")
            #expect(made.count == expected.count, "round \(round)")
            #expect((0..<made.count).map(made.id) == (0..<expected.count).map(expected.id), "round \(round): ids")
            #expect((0..<made.texts.count).map(made.texts.string) == (0..<expected.texts.count).map(expected.texts.string), "round \(round): texts")
            let columns: [(String, (HouseTable) -> [UInt32])] = [
                ("contexts", { Array($0.contexts) }), ("numbers", { Array($0.numbers) }), ("streets", { Array($0.contextStreets) }),
                ("places", { Array($0.contextPlaces) }), ("units", { Array($0.contextUnits) }),
                ("postcodes", { Array($0.contextPostcodes) }), ("cities", { Array($0.contextCities) }),
            ]
            for (name, column) in columns { #expect(column(made) == column(expected), "round \(round): \(name)") }
            #expect(Array(made.latitudes) == Array(expected.latitudes) && Array(made.longitudes) == Array(expected.longitudes), "round \(round)")
            #expect((0..<made.count).map { made[$0] } == houses, "round \(round): records")
        }
    }
}
