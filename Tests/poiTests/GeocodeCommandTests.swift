import Foundation
import Testing

@Suite struct GeocodeCommandTests {
    @Test func geocodeJSONIsTheAPIShape() throws {
        let result = try CLI.run(["geocode", "Springfield, IL", "--format", "json", "--limit", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let results = object["results"] as! [[String: Any]]
        #expect(results.count == 3)
        let first = results[0]
        for key in ["name", "displayName", "lat", "lon", "country", "admin1", "admin2", "population", "type", "score"] {
            #expect(first[key] != nil, "missing \(key)")
        }
        #expect(first["admin1"] as? String == "Illinois")
    }

    @Test func geocodeTableAndNoResult() throws {
        let table = try CLI.run(["geocode", "北京市海淀区中关村南大街5号"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("Haidian"))
        #expect(table.stdout.contains("中关村南大街5号"))
        let none = try CLI.run(["geocode", "qqqxxzzqqq"])
        #expect(none.status == 1)
        #expect(none.stderr.contains("no place matches"))
    }

    @Test(arguments: [
        (["geocode", ""], "the text must not be empty"),
        (["geocode", "x", "--limit", "0"], "limit must be an integer between 1 and 100"),
        (["geocode", "x", "--country", "Finland"], "country must be an ISO 3166-1 alpha-2 code"),
        (["geocode", "x", "--near", "91,0"], "--near: lat must be a number between -90 and 90"),
        (["geocode", "x", "--near", "abc"], "--near must be LAT,LON"),
        (["reverse", "--lat", "95", "--lon", "0"], "lat must be a number between -90 and 90"),
        (["reverse", "--lat", "nan", "--lon", "0"], "--lat must be a decimal number (got \"nan\")"),
    ])
    func badInputExitsWithTwo(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }

    @Test func reverseJSON() throws {
        let result = try CLI.run(["reverse", "--lat", "39.9836", "--lon", "116.3164", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(object["country"] as? String == "CN")
        let division = object["division"] as! [String: Any]
        #expect(division["district"] as? String == "海淀区")
        #expect((object["place"] as! [String: Any])["distance"] != nil)
    }
}
