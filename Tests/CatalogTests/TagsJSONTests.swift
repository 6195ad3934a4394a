import Foundation
import GeoCore
import TestSupport
import Testing

@testable import Records

/// The tags column's fast reader against Foundation's parser (the oracle) on what the store writes and on
/// hand-written edge cases.
@Suite struct TagsJSONTests {
    @Test func readsWhatTheStoreWritesLikeFoundation() throws {
        let seed = testSeed("readsWhatTheStoreWritesLikeFoundation")
        var random = SplitMix64(seed: seed)
        let alphabet: [Character] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "é", "咖", "😀", ":", ",", "{", "}"]
        func text() -> String { String((0..<Int(random.next() % 12)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }) }
        for _ in 0..<500 {
            var tags: [String: String] = [:]
            for _ in 0..<Int(random.next() % 4) { tags[text()] = text() }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: tags, options: [.sortedKeys]), as: UTF8.self)
            #expect(TagsJSON.decode(json) == tags, "SEED=\(seed) \(json)")
        }
    }

    @Test(
        arguments: [
            ("{}", [:]),
            (" { } ", [:]),
            ("{\"a\":\"b\"}", ["a": "b"]),
            ("{ \"a\" : \"b\" , \"c\":\"d\" }", ["a": "b", "c": "d"]),
            ("{\"a\":\"\\u00e9\\ud83d\\ude00\"}", ["a": "é😀"]),
            ("{\"a\":\"x\\/y\"}", ["a": "x/y"]),
        ] as [(String, [String: String])]
    )
    func readsValidObjects(json: String, expected: [String: String]) {
        #expect(TagsJSON.decode(json) == expected)
    }

    @Test(arguments: ["", "[]", "{\"a\":1}", "{\"a\":\"b\"", "{\"a\":\"b\"} x", "{\"a\" \"b\"}", "null"])
    func somethingElseIsNoTags(json: String) {
        #expect(TagsJSON.decode(json) == [:])
    }
}
