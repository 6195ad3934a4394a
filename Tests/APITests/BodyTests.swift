import API
import Foundation
import GeoCore
import SearchEngine
import TestSupport
import Testing

/// The write bodies as typed values: each rule of the contract, named by field.
@Suite struct BodyTests {
    static func pin(firstName: String = "A", mediaURL: String = "") -> PinInput {
        PinInput(uniqueKey: "u", firstName: firstName, lastName: "L", mapString: "", mediaURL: mediaURL, latitude: 60, longitude: 24)
    }

    @Test func pinRules() throws {
        #expect(throws: ParameterError("mediaURL", "must be an absolute http or https URL")) {
            try PinRules.check(Self.pin(mediaURL: "javascript:alert(1)"))
        }
        #expect(throws: ParameterError("firstName", "must be at most 200 characters")) {
            try PinRules.check(Self.pin(firstName: String(repeating: "a", count: 201)))
        }
        #expect(throws: ParameterError("firstName", "must not contain control characters")) { try PinRules.check(Self.pin(firstName: "a\u{7}")) }
        // On the Map keeps any text in mediaURL, within its bound.
        try PinRules.check(Self.pin(mediaURL: "not a url"), mediaURLMustBeURL: false)
        #expect(throws: ParameterError.self) {
            try PinRules.check(Self.pin(mediaURL: String(repeating: "x", count: 2_001)), mediaURLMustBeURL: false)
        }
        try PinRules.check(Self.pin(mediaURL: "https://example.org/a"))
    }

    /// A keyword text is trimmed as Foundation's `.whitespacesAndNewlines` trims it, on random texts of white space
    /// (every White_Space scalar and a few that are not: U+180E, U+200B, U+FEFF), controls, letters and CJK.
    @Test func textIsTrimmedAsFoundationTrims() throws {
        var random = testRandom("textIsTrimmedAsFoundationTrims")
        let scalars: [Unicode.Scalar] = [
            " ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2007}", "\u{200A}",
            "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{180E}", "\u{200B}", "\u{FEFF}", "a", "Z", "é", "北",
            "\u{301}", "\u{7}", "\u{7F}",
        ]
        for _ in 0..<5_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 8) { text.unicodeScalars.append(scalars[Int(random.next() % UInt64(scalars.count))]) }
            let expected = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if expected.isEmpty {
                #expect(throws: ParameterError("q", "must not be empty")) { try Rules.text(text, parameter: "q") }
            } else if expected.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                #expect(throws: ParameterError("q", "must not contain control characters")) { try Rules.text(text, parameter: "q") }
            } else {
                #expect(Array(try Rules.text(text, parameter: "q").unicodeScalars) == Array(expected.unicodeScalars), "\(text.debugDescription)")
            }
        }
    }

    @Test func poiBody() throws {
        let record = try POIBody(
            Array(#"{"name":"Cafe","category":"food.cafe","lat":60.1,"lon":24.9,"tags":{"wifi":"yes"}}"#.utf8),
            id: "x",
            coordsys: .wgs84
        ).record
        #expect(record.name == "Cafe" && record.lat == 60.1 && record.tags == ["wifi": "yes"])
        for (text, message) in [
            (#"{"id":"y","name":"A","category":"c","lat":1,"lon":1}"#, "id in the body must match the path (or be left out)"),
            (#"{"category":"c","lat":1,"lon":1}"#, "name is required"),
            (#"{"name":"A","category":"c","lat":1,"lon":1,"tags":{"a":1}}"#, "tags.a must be a string"),
            (#"{"name":"A","category":"c","lon":1}"#, "lat is required (a number between -90 and 90)"),
            (#"[1]"#, "the body must be a JSON object, not an array"),
        ] {
            #expect(throws: BodyError(message), "\(text)") { _ = try POIBody(Array(text.utf8), id: "x", coordsys: .wgs84) }
        }
    }

    @Test func convertBody() throws {
        let body = try ConvertBody(Array(#"{"from":"wgs84","to":"gcj02","points":[[116.4,39.9]]}"#.utf8))
        #expect(body.from == .wgs84 && body.to == .gcj02 && body.points == [XY(x: 116.4, y: 39.9)])
        #expect(throws: BodyError("points[0] must be [x, y] with two numbers")) {
            _ = try ConvertBody(Array(#"{"from":"wgs84","to":"gcj02","points":[[true,1]]}"#.utf8))
        }
    }
}
