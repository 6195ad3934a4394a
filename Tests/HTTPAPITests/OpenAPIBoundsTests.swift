import API
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Testing

/// The limits the OpenAPI document states for query parameters (minimum, maximum, exclusive bounds, maxLength) are
/// the ones the server applies: each operation's own example request, with one parameter set just inside a bound
/// (no 400 naming it) and just outside (a 400 naming it). The document's limits are written by hand beside `Rules`;
/// this holds the two together.
@Suite struct OpenAPIBoundsTests {
    struct Probe: CustomStringConvertible, Sendable {
        var operation: String
        var uri: String
        var parameter: String
        var refused: Bool
        var description: String { "\(operation): \(uri) should be \(refused ? "refused naming \(parameter)" : "accepted for \(parameter)")" }
    }

    /// Every probe the document implies.
    static let probes: [Probe] = {
        let document = try! JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json)) as! [String: Any]
        let shared = ((document["components"] as? [String: Any])?["parameters"] as? [String: [String: Any]]) ?? [:]
        var probes: [Probe] = []
        for (_, item) in document["paths"] as! [String: [String: Any]] {
            guard let operation = item["get"] as? [String: Any], let name = operation["operationId"] as? String else { continue }
            // The operation's example request (GET PATH?QUERY), found in its 200 answer.
            let answers = operation["responses"] as? [String: Any] ?? [:]
            let contents = ((answers["200"] as? [String: Any])?["content"] as? [String: [String: Any]]) ?? [:]
            guard let example = contents.values.compactMap({ $0["x-example-request"] as? String }).first, example.hasPrefix("GET ") else { continue }
            let target = String(example.dropFirst(4))
            for entry in operation["parameters"] as? [[String: Any]] ?? [] {
                var parameter = entry
                if let reference = entry["$ref"] as? String { parameter = shared[String(reference.split(separator: "/").last!)] ?? [:] }
                guard parameter["in"] as? String == "query", let key = parameter["name"] as? String,
                    let schema = parameter["schema"] as? [String: Any]
                else { continue }
                let integer = schema["type"] as? String == "integer"
                let step = integer ? 1.0 : 0.001
                func number(_ value: Double) -> String { integer ? String(Int(value)) : String(value) }
                // An origin comes as a pair: probing one coordinate brings the other along when the example lacks it.
                let partner = ["lat": ("lon", "24.94"), "lon": ("lat", "60.17")][key]
                let base = partner.map { !target.contains("\($0.0)=") ? replacing($0.0, with: $0.1, in: target) : target } ?? target
                func probe(_ value: String, refused: Bool) {
                    probes.append(Probe(operation: name, uri: replacing(key, with: value, in: base), parameter: key, refused: refused))
                }
                if let minimum = schema["minimum"] as? Double {
                    probe(number(minimum), refused: false)
                    probe(number(minimum - step), refused: true)
                }
                if let minimum = schema["exclusiveMinimum"] as? Double {
                    probe(number(minimum), refused: true)
                    probe(number(minimum + step), refused: false)
                }
                if let maximum = schema["maximum"] as? Double {
                    probe(number(maximum), refused: false)
                    probe(number(maximum + step), refused: true)
                }
                if let length = schema["maxLength"] as? Int {
                    probe(String(repeating: "a", count: length + 1), refused: true)
                }
            }
        }
        return probes.sorted { $0.uri < $1.uri }
    }()

    /// `target` with `key` set to `value` (replacing it where the example has it).
    static func replacing(_ key: String, with value: String, in target: String) -> String {
        let parts = target.split(separator: "?", maxSplits: 1)
        var items = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        items.removeAll { $0.hasPrefix(key + "=") }
        items.append("\(key)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)")
        return "\(parts[0])?\(items.joined(separator: "&"))"
    }

    @Test func theDocumentStatesBoundsForManyParameters() {
        #expect(Self.probes.count > 60, "only \(Self.probes.count) probes: are the examples or bounds missing?")
    }

    @Test(arguments: probes) func documentedBoundsAreTheServersBounds(_ probe: Probe) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: probe.uri, method: .get)
            let detail = response.status == .badRequest ? ((try? json(response))?["detail"] as? String ?? "") : ""
            if probe.refused {
                #expect(response.status == .badRequest && detail.contains(probe.parameter), "\(probe): \(response.status) \(detail)")
            } else {
                #expect(!(response.status == .badRequest && detail.contains(probe.parameter)), "\(probe): \(response.status) \(detail)")
            }
        }
    }
}
