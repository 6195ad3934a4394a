import API
import HTTPServer
import Hummingbird
import SearchEngine

/// nearby, search, within, clusters: the wire layer parses the request, the engine answers, the request encodes.
struct QueryController {
    let engine: SearchEngine

    func register(on routes: RouteRegistrar) {
        list("nearby", NearbyRequest.self, cost: .heavyWith(parameter: "q"), on: routes) { [engine] in engine.nearby($0) }
        list("search", SearchRequest.self, cost: .heavy, on: routes) { [engine] in try engine.search($0) }
        list("within", WithinRequest.self, cost: .heavyWith(parameter: "q"), on: routes) { [engine] in engine.within($0) }
        list("clusters", ClustersRequest.self, cost: .heavy, on: routes) { [engine] in try engine.clusters($0) }
    }

    /// A list operation: parse the request, ask the engine, encode the answer in the request's format.
    private func list<R: ListRequest>(
        _ operationId: String,
        _ request: R.Type,
        cost: ReadCost,
        on routes: RouteRegistrar,
        _ answer: @escaping @Sendable (R.Query) throws -> R.Answer
    ) {
        routes.read(operationId, cost: cost) { input in
            let parsed = try R(input.parameters)
            return .encoded(parsed.encoder, parsed.encode(try answer(parsed.query)))
        }
    }
}
