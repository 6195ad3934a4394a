import API
import Foundation
import SearchEngine

extension Answers {
    /// Decodes an answer the CLI prints; an answer that is not the API's is a failure (exit 1) that says so.
    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        do { return try decode(type, from: bytes) } catch {
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
        let page = try Answers.decode(Answers.Page.self, bytes)
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
