import API
import Foundation
import SearchEngine

/// The HTTP API's answers as the CLI prints them in tables, decoded from the JSON the API writes: the server's
/// answer with `--server`, or the same bytes encoded here. One printer for both, so the two cannot differ.
enum Answers {
    /// A list operation's page (`/v1/nearby`, `/v1/search`, `/v1/within`).
    struct Records: Decodable {
        struct Record: Decodable {
            let id: String
            let name: String?
            let firstName: String?
            let lastName: String?
            let category: String?
            let kind: String?
            let distance: Double?
            let lat: Double
            let lon: Double

            /// A POI's name, or a pin's person.
            var title: String { name ?? [firstName, lastName].compactMap { $0 }.joined(separator: " ") }
        }

        let results: [Record]
        let next: String?
    }

    /// `/v1/clusters`.
    struct Clusters: Decodable {
        struct Cell: Decodable {
            let geohash: String
            let count: Int
            let lat: Double
            let lon: Double
        }

        let results: [Cell]
    }

    /// `/v1/geocode`.
    struct Places: Decodable {
        struct Place: Decodable {
            let name: String?
            let displayName: String?
            let unresolved: String?
            let lat: Double
            let lon: Double
            let type: String?
            let population: Int?
            let score: Double?
        }

        let results: [Place]
    }

    /// A live import's task (`POST /v1/import`, `GET /v1/tasks/{id}`).
    struct ImportTask: Decodable {
        struct Problem: Decodable {
            let line: Int?
            let reason: String?
        }

        let id: String
        let status: String
        let imported: Int?
        let skipped: Int?
        let duplicates: Int?
        let bytes: Int?
        let bytesRead: Int?
        let problems: [Problem]?
        let error: String?
    }

    /// A problem+json answer.
    struct ProblemDetail: Decodable {
        let detail: String?
    }

    /// How many records a JSON or GeoJSON list holds, whatever they are.
    struct Count: Decodable {
        struct Anything: Decodable {
            init(from decoder: any Decoder) throws {}
        }

        let results: [Anything]?
        let features: [Anything]?

        var isEmpty: Bool { (results ?? features ?? []).isEmpty }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        do { return try JSONDecoder().decode(type, from: Data(bytes)) } catch {
            throw CLIError.failure("the answer is not the API's \(type) (\(error))")
        }
    }
}

extension OutputOptions {
    /// A list operation's answer, the API's bytes: from `--server` when one is given, else made here with the
    /// request parsed by the API's own rules (`options` names the CLI's options for the parameters it reports).
    func answer<R: ListRequest>(
        _ request: R.Type,
        _ path: String,
        _ parameters: QueryItems,
        _ database: DatabaseOptions,
        options: [String: String] = [:],
        _ ask: (SearchEngine, R.Query) throws -> R.Answer
    ) throws -> [UInt8] {
        if let server { return try ServerClient.get(server, path, parameters) }
        let request = try validated(options: options) { () throws(ParameterError) in try R(RequestParameters(parameters)) }
        let engine = try database.openEngine()
        return request.encode(try runQuery { try ask(engine, request.query) })
    }

    /// Prints a list answer as a table, or as it is (JSON or GeoJSON); exits 1 when it is empty.
    func printList(_ bytes: [UInt8]) throws {
        guard format == .table else {
            Swift.print(String(decoding: bytes, as: UTF8.self))
            if try Answers.decode(Answers.Count.self, bytes).isEmpty { throw CLIError.failure("no results") }
            return
        }
        let page = try Answers.decode(Answers.Records.self, bytes)
        Swift.print(
            Table.render(
                header: ["name", "category", "distance", "lat", "lon", "id"],
                rows: page.results.map { r in
                    [
                        r.title, r.category ?? r.kind ?? "", r.distance.map { String(format: "%.0f m", $0) } ?? "", String(format: "%.6f", r.lat),
                        String(format: "%.6f", r.lon), r.id,
                    ]
                }
            )
        )
        if let next = page.next { Swift.print("next: \(next)") }
        if page.results.isEmpty { throw CLIError.failure("no results") }
    }
}
