import Foundation
import TestSupport
import Testing

@testable import Datasets

/// The importer's fast paths for texts against the plain way of doing the same: object ids against string
/// interpolation, and tag cleaning against removing control characters and trimming spaces.
@Suite struct OSMImporterTextTests {
    @Test func objectIDsAreTheInterpolatedOnes() {
        var random = testRandom("objectIDsAreTheInterpolatedOnes")
        var ids: [Int64] = [0, 1, -1, 9, 10, 42, 99_999, Int64.max, Int64.min, Int64.min + 1]
        for _ in 0..<2_000 { ids.append(Int64(bitPattern: random.next()) >> Int64(random.next() % 64)) }
        for id in ids {
            #expect(OSMImporter.objectID("osm-n", id) == "osm-n\(id)")
            #expect(OSMImporter.objectID("osm-w", id) == "osm-w\(id)")
        }
    }

    @Test func cleaningRemovesControlsAndOuterSpacesOnly() {
        func reference(_ value: String) -> String? {
            let kept = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.properties.generalCategory != .control }))
                .trimmingCharacters(in: .whitespaces)
            return kept.isEmpty ? nil : kept
        }
        let values = [
            "", " ", "Mannerheimintie", " Mannerheimintie", "Mannerheimintie ", "13\tA", "a\u{7F}b", "a\u{85}b", "a\u{9F}", "Ä",
            "中关村大街", "é", "\u{C2}", "x\u{0}y", String(repeating: "Bulevardi ", count: 5), "\u{2003}space\u{2003}",
        ]
        for value in values {
            #expect(OSMImporter.clean(value) == reference(value), "\(value.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(OSMImporter.clean(nil) == nil)
    }
}
