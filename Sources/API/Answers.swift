import Foundation

/// The HTTP API's answers as a client reads them, decoded with Codable: the CLI's tables and its `--server` mode,
/// and the tests. Types are checked (a string where a number belongs fails); members a model leaves out are ignored,
/// and members the API writes only sometimes are optional.
public enum Answers {
    /// A record of a list or of `GET /v1/pois/{id}`, `/v1/pins/{id}`: a POI's or a pin's fields.
    public struct Record: Decodable, Sendable, Equatable {
        public let id: String
        public let kind: String?
        public let lat: Double
        public let lon: Double
        /// Metres from the origin (nearby, and search with an origin).
        public let distance: Double?
        public let score: Double?
        public let name: String?
        public let category: String?
        public let address: String?
        public let city: String?
        public let country: String?
        public let tags: [String: String]?
        public let uniqueKey: String?
        public let firstName: String?
        public let lastName: String?
        public let mapString: String?
        public let mediaURL: String?
        public let createdAt: String?
        public let updatedAt: String?
        /// Pin answers: whether the caller's user token names the pin's owner.
        public let owned: Bool?

        /// A POI's name, or a pin's person.
        public var title: String { name ?? [firstName, lastName].compactMap { $0 }.joined(separator: " ") }
    }

    /// A list operation's page (`/v1/nearby`, `/v1/search`, `/v1/within`, `/v1/pins`).
    public struct Page: Decodable, Sendable {
        public let results: [Record]
        /// The cursor of the next page (nearby, within).
        public let next: String?
        /// How many records match (search, pins).
        public let total: Int?

        public var ids: [String] { results.map(\.id) }
    }

    /// `/v1/clusters`.
    public struct Clusters: Decodable, Sendable {
        public struct Cell: Decodable, Sendable {
            public let geohash: String
            public let count: Int
            public let lat: Double
            public let lon: Double
        }

        public let results: [Cell]
    }

    /// A place or address of `/v1/geocode` and `/v1/reverse`.
    public struct Place: Decodable, Sendable {
        public let name: String?
        public let displayName: String?
        public let unresolved: String?
        public let lat: Double
        public let lon: Double
        /// city, province, …, `house` or `street`.
        public let type: String?
        public let population: Int?
        public let score: Double?
        public let distance: Double?
        /// Street, house number, postcode and city of a `house` or `street` answer.
        public let address: AddressParts?
    }

    /// The parts of a street address.
    public struct AddressParts: Decodable, Sendable {
        public let street: String?
        public let housenumber: String?
        public let unit: String?
        public let postcode: String?
        public let city: String?
    }

    /// `/v1/geocode`.
    public struct Places: Decodable, Sendable {
        public let results: [Place]
    }

    /// `/v1/reverse`.
    public struct Reverse: Decodable, Sendable {
        public let place: Place?
        public let address: Place?
        public let country: String?
    }

    /// A GeoJSON FeatureCollection (`format=geojson`, `/v1/streets`, the bundled outlines), to its geometry's type.
    public struct FeatureCollection: Decodable, Sendable {
        public struct Feature: Decodable, Sendable {
            public struct Geometry: Decodable, Sendable {
                public let type: String
            }

            public let type: String
            public let geometry: Geometry?
        }

        public let type: String
        public let features: [Feature]
    }

    /// `/v1/convert` (`point`) and its batch (`points`), as `[x, y]`.
    public struct Conversion: Decodable, Sendable {
        public let from: String
        public let to: String
        public let point: [Double]?
        public let points: [[Double]]?
    }

    /// `/health`.
    public struct Health: Decodable, Sendable {
        public let status: String
        public let pois: Int
        public let pins: Int
    }

    /// A problem+json answer (RFC 9457).
    public struct Problem: Decodable, Sendable {
        public let type: String?
        public let title: String?
        public let status: Int?
        public let detail: String?
    }

    /// A live import's task (`POST /v1/import`, `GET /v1/tasks/{id}`).
    public struct ImportTask: Decodable, Sendable {
        public struct Problem: Decodable, Sendable {
            public let line: Int?
            public let reason: String?
        }

        public let id: String
        public let status: String
        public let format: String?
        public let imported: Int?
        public let skipped: Int?
        public let duplicates: Int?
        public let bytes: Int?
        public let bytesRead: Int?
        public let problems: [Problem]?
        public let error: String?
    }

    /// `GET /v1/tasks`.
    public struct ImportTasks: Decodable, Sendable {
        public let results: [ImportTask]
    }

    /// How many records a JSON or GeoJSON list holds, whatever they are.
    public struct Count: Decodable, Sendable {
        struct Anything: Decodable {
            init(from decoder: any Decoder) throws {}
        }

        let results: [Anything]?
        let features: [Anything]?

        public var isEmpty: Bool { (results ?? features ?? []).isEmpty }
    }

    /// Decodes an answer's bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Sequence<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
