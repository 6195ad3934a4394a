import API
import ArgumentParser
import Foundation
import GeoCore
import SearchEngine
import Startup

struct SuggestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest",
        abstract: "What a search box suggests as the text is typed: POIs (also by pinyin), houses and streets, places."
    )

    @Argument(help: "The text as typed so far, e.g. \"kdj\", \"Mannerheimintie 1\" or 中关村南大街5.") var text: String
    @Option(help: "Nearer first, with distances: LAT,LON.") var near: String?
    @Option(help: "Only POIs of this category prefix.") var category: String?
    @Option(help: "What may be suggested: poi, address, place (comma-separated; default all).") var only: String?
    @Option(help: "Number of suggestions (1 to 100).") var limit: Int = 10
    @OptionGroup var data: GazetteerOptions

    func parameters() throws -> QueryItems {
        let origin = try near.map { try parseLatLon($0, option: "--near") }
        return [
            ("q", text), ("lat", origin.map { String($0.latitude) }), ("lon", origin.map { String($0.longitude) }), ("category", category),
            ("sources", only), ("limit", String(limit)),
        ]
    }

    func run() throws {
        let parameters = try parameters()
        let bytes: [UInt8]
        if let server = data.server {
            bytes = try ServerClient.get(server, "/v1/suggest", parameters)
        } else {
            let options = ["q": "the text", "lat": "--near", "lon": "--near", "sources": "--only"]
            let request = try validated(options: options) { () throws(ParameterError) in try SuggestRequest(RequestParameters(parameters)) }
            let engine = keepUntilExit(try startup { () throws(StartupError) in try data.sources.openEngine() })
            engine.settleAddresses()  // the POIs' own houses, indexed here: this process answers once
            let geocoder = Geocoder(engine: engine, gazetteer: try data.gazetteer())
            bytes = request.encode(try runQuery { try geocoder.suggest(request.query) })
        }
        guard data.format == .table else { return print(String(decoding: bytes, as: UTF8.self)) }
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        let results = object?["results"] as? [[String: Any]] ?? []
        if results.isEmpty { throw CLIError.failure("nothing to suggest for \"\(text)\"") }
        let rows = results.map { r -> [String] in
            let kind = r["kind"] as? String ?? ""
            let detail = kind == "poi" ? (r["category"] as? String ?? "") : (r["type"] as? String ?? "")
            let distance = (r["distance"] as? Double).map { String(format: "%.0f m", $0) } ?? ""
            return [
                kind, r["name"] as? String ?? "", detail, String(format: "%.6f", r["lat"] as? Double ?? 0),
                String(format: "%.6f", r["lon"] as? Double ?? 0),
                distance, r["id"] as? String ?? "",
            ]
        }
        print(Table.render(header: ["kind", "name", "type", "lat", "lon", "distance", "id"], rows: rows))
    }
}
