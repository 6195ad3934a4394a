import API
import ArgumentParser
import Foundation
import GeoCore
import SearchEngine

struct NearbyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "nearby", abstract: "Records nearest first from a point.")

    @Option(help: "Latitude of the origin.") var lat: Double
    @Option(help: "Longitude of the origin.") var lon: Double
    @Option(help: "Only records within this many metres (at most 1000000).") var radius: Double?
    @Option(help: "Keyword filter.") var q: String?
    @Option(help: "Category prefix, e.g. food or food.cafe.") var category: String?
    @Option(help: "poi, pin or all.") var kind: String = "poi"
    @Option(help: "Results per page (1 to 100).") var limit: Int = 20
    @Option(help: "Continue after a previous page.") var cursor: String?
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    /// The request's parameters, the same whether sent to a server or parsed here.
    var parameters: QueryItems {
        [
            ("lat", String(lat)), ("lon", String(lon)), ("radius", radius.map { String($0) }), ("q", q), ("category", category), ("kind", kind),
            ("limit", String(limit)), ("cursor", cursor),
        ] + output.parameters
    }

    func run() throws {
        if let server = output.server {
            return try ServerClient.printList(try ServerClient.get(server, "/v1/nearby", parameters), format: output.format)
        }
        let request = try validated { () throws(ParameterError) in try NearbyRequest(RequestParameters(parameters)) }
        let engine = try database.openEngine()
        try output.print(engine.nearby(request.query), encoded: request.encode)
    }
}

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Keyword search ranked by relevance.")

    @Argument(help: "The keywords.") var text: String
    @Option(help: "Favour records near LAT,LON and show distances.") var near: String?
    @Option(help: "Only records inside W,S,E,N.") var bbox: String?
    @Option(help: "Category prefix.") var category: String?
    @Option(help: "poi, pin or all.") var kind: String = "poi"
    @Option(help: "Results (1 to 100).") var limit: Int = 20
    @Option(help: "Skip this many results.") var offset: Int = 0
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func parameters() throws -> QueryItems {
        let near = try self.near.map { try parseLatLon($0, option: "--near") }
        return [
            ("q", text), ("lat", near.map { String($0.latitude) }), ("lon", near.map { String($0.longitude) }), ("bbox", bbox),
            ("category", category), ("kind", kind), ("limit", String(limit)), ("offset", String(offset)),
        ] + output.parameters
    }

    func run() throws {
        let parameters = try parameters()
        if let server = output.server {
            return try ServerClient.printList(try ServerClient.get(server, "/v1/search", parameters), format: output.format)
        }
        let request = try validated(options: ["q": "the keywords", "lat": "--near", "lon": "--near"]) { () throws(ParameterError) in
            try SearchRequest(RequestParameters(parameters))
        }
        let engine = try database.openEngine()
        try output.print(try runQuery { try engine.search(request.query) }, encoded: request.encode)
    }
}

struct WithinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "within", abstract: "Records inside a box or polygon.")

    @Option(help: "W,S,E,N (west > east crosses the antimeridian).") var bbox: String?
    @Option(help: "\"lon,lat;lon,lat;...\" (at least 3 vertices).") var polygon: String?
    @Option(help: "Keyword filter.") var q: String?
    @Option(help: "Category prefix.") var category: String?
    @Option(help: "poi, pin or all.") var kind: String = "poi"
    @Option(help: "Results per page (1 to 100).") var limit: Int = 20
    @Option(help: "Continue after a previous page.") var cursor: String?
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (bbox == nil) != (polygon == nil) else { throw ValidationError("give exactly one of --bbox and --polygon") }
    }

    var parameters: QueryItems {
        [("bbox", bbox), ("polygon", polygon), ("q", q), ("category", category), ("kind", kind), ("limit", String(limit)), ("cursor", cursor)]
            + output.parameters
    }

    func run() throws {
        if let server = output.server {
            return try ServerClient.printList(try ServerClient.get(server, "/v1/within", parameters), format: output.format)
        }
        let request = try validated { () throws(ParameterError) in try WithinRequest(RequestParameters(parameters)) }
        let engine = try database.openEngine()
        try output.print(engine.within(request.query), encoded: request.encode)
    }
}

struct ClustersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clusters", abstract: "Counts and centroids per geohash cell for a map.")

    @Option(help: "W,S,E,N.") var bbox: String
    @Option(help: "Geohash precision 1 to 12.") var precision: Int
    @Option(help: "Keyword filter.") var q: String?
    @Option(help: "Category prefix.") var category: String?
    @Option(help: "poi, pin or all.") var kind: String = "poi"
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    var parameters: QueryItems {
        [("bbox", bbox), ("precision", String(precision)), ("q", q), ("category", category), ("kind", kind)] + output.parameters
    }

    func run() throws {
        if let server = output.server {
            let bytes = try ServerClient.get(server, "/v1/clusters", parameters)
            guard output.format == .table else { return print(String(decoding: bytes, as: UTF8.self)) }
            let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            let cells = object?["results"] as? [[String: Any]] ?? []
            print(
                Table.render(
                    header: ["geohash", "count", "lat", "lon"],
                    rows: cells.map { c in
                        [
                            c["geohash"] as? String ?? "", String(c["count"] as? Int ?? 0), String(format: "%.6f", c["lat"] as? Double ?? 0),
                            String(format: "%.6f", c["lon"] as? Double ?? 0),
                        ]
                    }
                )
            )
            if cells.isEmpty { throw CLIError.failure("no results") }
            return
        }
        let request = try validated { () throws(ParameterError) in try ClustersRequest(RequestParameters(parameters)) }
        let coordsys = request.encoder.coordsys
        let engine = try database.openEngine()
        let clusters = try runQuery { try engine.clusters(request.query) }
        if output.format == .table {
            print(
                Table.render(
                    header: ["geohash", "count", "lat", "lon"],
                    rows: clusters.map { c in
                        let p = coordsys.fromWGS84(latitude: c.latitude, longitude: c.longitude)
                        return [c.geohash.string, String(c.count), String(format: "%.6f", p.latitude), String(format: "%.6f", p.longitude)]
                    }
                )
            )
        } else {
            print(String(decoding: request.encode(clusters), as: UTF8.self))
        }
        if clusters.isEmpty { throw CLIError.failure("no results") }
    }
}
