import Foundation

/// The OpenAPI 3.1 document served at /openapi.json, made from the route table: `paths` lists the table's `.api`
/// routes in its order, each operation's description (parameters, answers, examples) taken by operationId from
/// `OpenAPI/operations.json`, the rest (info, shared schemas, parameters and answers) from `OpenAPI/document.json`.
/// A route without a described operation, or a described operation without a route, is a programming error found
/// by the first request to build the document (every test run builds it).
public enum OpenAPIDocument {
    /// The document's bytes.
    public static let json: [UInt8] = {
        switch Result(catching: { try build() }) {
        case .success(let bytes): return bytes
        case .failure(let error): preconditionFailure("the OpenAPI document cannot be built: \(error)")
        }
    }()

    public struct BuildError: Error, CustomStringConvertible {
        public let description: String
    }

    static func build(routes: [Route] = RouteTable.routes) throws -> [UInt8] {
        let document = try object(resource: "document")
        var operations = try object(resource: "operations")
        let api = routes.filter { $0.group == .api }
        var paths: [String] = []
        for route in api where !paths.contains(route.path) { paths.append(route.path) }

        var out = Data("{\"openapi\":".utf8)
        out += try fragment(document["openapi"] ?? "3.1.0")
        out += Data(",\"info\":".utf8)
        out += try fragment(document["info"] ?? [:])
        out += Data(",\"paths\":{".utf8)
        for (i, path) in paths.enumerated() {
            if i > 0 { out += Data(",".utf8) }
            out += try fragment(path)
            out += Data(":{".utf8)
            for (j, route) in api.filter({ $0.path == path }).enumerated() {
                guard var operation = operations.removeValue(forKey: route.operationId) as? [String: Any] else {
                    throw BuildError(description: "\(route) (\(route.operationId)) has no operation in operations.json")
                }
                operation["operationId"] = route.operationId
                if j > 0 { out += Data(",".utf8) }
                out += try fragment(route.method.rawValue.lowercased())
                out += Data(":".utf8)
                out += try fragment(operation)
            }
            out += Data("}".utf8)
        }
        out += Data("},\"components\":".utf8)
        out += try fragment(document["components"] ?? [:])
        out += Data("}".utf8)
        guard operations.isEmpty else {
            throw BuildError(description: "operations.json describes operations no route has: \(operations.keys.sorted())")
        }
        return [UInt8](out)
    }

    private static func object(resource name: String) throws -> [String: Any] {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "OpenAPI") else {
            throw BuildError(description: "the resource OpenAPI/\(name).json is missing")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
            throw BuildError(description: "OpenAPI/\(name).json is not a JSON object")
        }
        return object
    }

    /// One value as compact JSON, object keys sorted so that the document is the same bytes on every start.
    private static func fragment(_ value: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
    }
}
