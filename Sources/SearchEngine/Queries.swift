import Catalog
import GeoCore

/// Which records a query looks at.
public enum KindFilter: String, Sendable, CaseIterable {
    case poi, pin, all

    public init(parsing text: String?) throws(SearchError) {
        guard let text else {
            self = .poi
            return
        }
        guard let kind = KindFilter(rawValue: text) else { throw .invalid(parameter: "kind", rule: "must be poi, pin or all") }
        self = kind
    }

    func includes(_ kind: RecordKind) -> Bool { self == .all || rawValue == kind.rawValue }
}

/// Shared validation of the common parameters.
public enum QueryValidation {
    public static func limit(_ value: Int?, default defaultValue: Int = 20) throws(SearchError) -> Int {
        let limit = value ?? defaultValue
        guard (1...100).contains(limit) else { throw .invalid(parameter: "limit", rule: "must be an integer between 1 and 100") }
        return limit
    }

    public static func category(_ value: String?) throws(SearchError) -> String? {
        guard let value else { return nil }
        let trimmed = value.lowercased()
        let valid = !trimmed.isEmpty && trimmed.count <= 64
            && trimmed.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                !part.isEmpty && part.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" }
            }
        guard valid else { throw .invalid(parameter: "category", rule: "must be a category path such as food or food.cafe") }
        return trimmed
    }

    public static func text(_ value: String?, parameter: String = "q") throws(SearchError) -> String? {
        guard let value else { return nil }
        // Lengths count Unicode scalars, as JSON Schema's maxLength does.
        guard value.unicodeScalars.count <= 500 else { throw .invalid(parameter: parameter, rule: "must be at most 500 characters") }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .invalid(parameter: parameter, rule: "must not be empty") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(parameter: parameter, rule: "must not contain control characters")
        }
        return trimmed
    }

    public static func origin(lat: Double?, lon: Double?, required: Bool) throws(SearchError) -> Coordinate? {
        if lat == nil && lon == nil {
            if required { throw .invalid(parameter: "lat", rule: "is required (with lon)") }
            return nil
        }
        guard let lat else { throw .invalid(parameter: "lat", rule: "is required when lon is given") }
        guard let lon else { throw .invalid(parameter: "lon", rule: "is required when lat is given") }
        do { return try Coordinate(latitude: lat, longitude: lon) } catch { throw SearchError.from(error) }
    }
}

/// GET /v1/nearby: nearest first from an origin.
public struct NearbyQuery: Sendable {
    public var origin: Coordinate
    /// Metres; only records within it. Without it: the `limit` nearest.
    public var radius: Double?
    public var text: String?
    public var category: String?
    public var kind: KindFilter = .poi
    public var limit = 20
    public var cursor: String?

    public init(origin: Coordinate, radius: Double? = nil, text: String? = nil, category: String? = nil, kind: KindFilter = .poi, limit: Int = 20, cursor: String? = nil) throws(SearchError) {
        if let radius {
            guard radius.isFinite, radius > 0, radius <= 1_000_000 else {
                throw .invalid(parameter: "radius", rule: "must be a number of metres greater than 0 and at most 1000000")
            }
        }
        self.origin = origin
        self.radius = radius
        self.text = try QueryValidation.text(text)
        self.category = try QueryValidation.category(category)
        self.kind = kind
        self.limit = try QueryValidation.limit(limit)
        self.cursor = cursor
    }
}

/// GET /v1/search: keyword search ranked by relevance.
public struct SearchQuery: Sendable {
    public var text: String
    public var origin: Coordinate?
    public var bbox: BoundingBox?
    public var category: String?
    public var kind: KindFilter = .poi
    public var limit = 20
    public var offset = 0

    public init(text: String, origin: Coordinate? = nil, bbox: BoundingBox? = nil, category: String? = nil, kind: KindFilter = .poi, limit: Int = 20, offset: Int = 0) throws(SearchError) {
        guard let text = try QueryValidation.text(text) else { throw .invalid(parameter: "q", rule: "is required") }
        guard (0...10_000).contains(offset) else { throw .invalid(parameter: "offset", rule: "must be an integer between 0 and 10000") }
        self.text = text
        self.origin = origin
        self.bbox = bbox
        self.category = try QueryValidation.category(category)
        self.kind = kind
        self.limit = try QueryValidation.limit(limit)
        self.offset = offset
    }
}

/// GET /v1/within: records inside a box or polygon, in a stable order (record creation order).
public struct WithinQuery: Sendable {
    public enum Area: Sendable {
        case box(BoundingBox)
        case polygon(Polygon)
    }

    public var area: Area
    public var text: String?
    public var category: String?
    public var kind: KindFilter = .poi
    public var limit = 20
    public var cursor: String?

    public init(area: Area, text: String? = nil, category: String? = nil, kind: KindFilter = .poi, limit: Int = 20, cursor: String? = nil) throws(SearchError) {
        self.area = area
        self.text = try QueryValidation.text(text)
        self.category = try QueryValidation.category(category)
        self.kind = kind
        self.limit = try QueryValidation.limit(limit)
        self.cursor = cursor
    }
}

/// GET /v1/clusters.
public struct ClusterQuery: Sendable {
    public var bbox: BoundingBox
    public var precision: Int
    public var text: String?
    public var category: String?
    public var kind: KindFilter = .poi

    public init(bbox: BoundingBox, precision: Int, text: String? = nil, category: String? = nil, kind: KindFilter = .poi) throws(SearchError) {
        guard (1...12).contains(precision) else { throw .invalid(parameter: "precision", rule: "must be an integer between 1 and 12") }
        self.bbox = bbox
        self.precision = precision
        self.text = try QueryValidation.text(text)
        self.category = try QueryValidation.category(category)
        self.kind = kind
    }
}

/// One record of an answer.
public struct Hit: Sendable {
    /// Indirect: a record is a pointer to its fields, so answers and the engine copy one reference, not every string.
    public indirect enum Record: Sendable {
        case poi(POIRecord)
        case pin(PinRecord)
    }

    enum Storage: Sendable {
        case record(Record)
        /// A POI straight from the record store: the encoder writes its bytes without making Strings.
        case packed(PackedPOI)
    }

    let storage: Storage
    /// Metres from the origin, when the query has one.
    public let distance: Double?
    /// Relevance, for keyword search.
    public let score: Double?

    public var record: Record {
        switch storage {
        case .record(let record): return record
        case .packed(let packed): return .poi(packed.record)
        }
    }
}

/// A page of results and the cursor of the next page (nil at the end).
public struct Page: Sendable {
    public let results: [Hit]
    public let next: String?
    /// Total matches (keyword search only).
    public let total: Int?
}

import Foundation
