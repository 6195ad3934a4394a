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
    @OptionGroup var filter: FilterOptions
    @OptionGroup var page: PageOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    /// The request's parameters, the same whether sent to a server or parsed here.
    var parameters: QueryItems {
        [
            ("lat", String(lat)), ("lon", String(lon)), ("radius", radius.map { String($0) }),
        ] + filter.parameters + page.parameters + output.parameters
    }

    func run() throws {
        try output.printList(output.answer(NearbyRequest.self, "/v1/nearby", parameters, database) { $0.nearby($1) })
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
        let options = ["q": "the keywords", "lat": "--near", "lon": "--near"]
        try output.printList(output.answer(SearchRequest.self, "/v1/search", parameters(), database, options: options) { try $0.search($1) })
    }
}

struct WithinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "within", abstract: "Records inside a box or polygon.")

    @Option(help: "W,S,E,N (west > east crosses the antimeridian).") var bbox: String?
    @Option(help: "\"lon,lat;lon,lat;...\" (at least 3 vertices).") var polygon: String?
    @OptionGroup var filter: FilterOptions
    @OptionGroup var page: PageOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (bbox == nil) != (polygon == nil) else { throw ValidationError("give exactly one of --bbox and --polygon") }
    }

    var parameters: QueryItems {
        [("bbox", bbox), ("polygon", polygon)] + filter.parameters + page.parameters + output.parameters
    }

    func run() throws {
        try output.printList(output.answer(WithinRequest.self, "/v1/within", parameters, database) { $0.within($1) })
    }
}

struct ClustersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clusters", abstract: "Counts and centroids per geohash cell for a map.")

    @Option(help: "W,S,E,N.") var bbox: String
    @Option(help: "Geohash precision 1 to 12.") var precision: Int
    @OptionGroup var filter: FilterOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    var parameters: QueryItems {
        [("bbox", bbox), ("precision", String(precision))] + filter.parameters + output.parameters
    }

    func run() throws {
        let bytes = try output.answer(ClustersRequest.self, "/v1/clusters", parameters, database) { try $0.clusters($1) }
        guard output.format == .table else {
            print(String(decoding: bytes, as: UTF8.self))
            if try Answers.decode(Answers.Count.self, bytes).isEmpty { throw CLIError.failure("no results") }
            return
        }
        let clusters = try Answers.decode(Answers.Clusters.self, bytes).results
        print(
            Table.render(
                header: ["geohash", "count", "lat", "lon"],
                rows: clusters.map { c in [c.geohash, String(c.count), String(format: "%.6f", c.lat), String(format: "%.6f", c.lon)] }
            )
        )
        if clusters.isEmpty { throw CLIError.failure("no results") }
    }
}

/// The filter of nearby, within and clusters: a keyword, a category, a kind of record.
struct FilterOptions: ParsableArguments {
    @Option(help: "Keyword filter.") var q: String?
    @Option(help: "Category prefix, e.g. food or food.cafe.") var category: String?
    @Option(help: "poi, pin or all.") var kind: String = "poi"

    var parameters: QueryItems { [("q", q), ("category", category), ("kind", kind)] }
}

/// The page of a list that continues with a cursor.
struct PageOptions: ParsableArguments {
    @Option(help: "Results per page (1 to 100).") var limit: Int = 20
    @Option(help: "Continue after a previous page.") var cursor: String?

    var parameters: QueryItems { [("limit", String(limit)), ("cursor", cursor)] }
}
