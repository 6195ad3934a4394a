import Foundation
import GeoCore

/// Turns one decoded input object (a JSON object, GeoJSON properties plus coordinates, or a CSV row) into a
/// validated record, or a reason it cannot be one.
struct RecordParser {
    let kind: RecordKind
    let crs: CRS
    let now: String

    typealias Parsed = ImportedRecord

    struct Rejection: Error {
        let reason: String
    }

    /// `fields` are the record's properties; `position` overrides lat/lon when the format carries geometry apart.
    func parse(_ fields: [String: Any], position: (lon: Double, lat: Double)? = nil) throws(Rejection) -> Parsed {
        let (lon, lat) = try coordinates(fields, position)
        switch kind {
        case .poi:
            guard let id = identifier(fields["id"]) else { throw Rejection(reason: "missing id (a non-empty string or number)") }
            guard let name = text(fields["name"]), !name.isEmpty else { throw Rejection(reason: "missing name") }
            let category = text(fields["category"]) ?? "other"
            guard RecordParser.isCategory(category) else {
                throw Rejection(reason: "category must be a lowercase dot path such as food.cafe (got \"\(category.prefix(60))\")")
            }
            var tags: [String: String] = [:]
            if let given = fields["tags"] as? [String: Any] {
                for (key, value) in given { tags[key] = text(value) ?? "\(value)" }
            }
            for (key, value) in fields where !RecordParser.poiFields.contains(key) {
                if let value = text(value), !value.isEmpty { tags[key] = value }
            }
            return .poi(
                POIRecord(
                    id: id,
                    name: name,
                    category: category,
                    address: text(fields["address"]),
                    city: text(fields["city"]),
                    country: text(fields["country"]),
                    lat: lat,
                    lon: lon,
                    tags: tags
                )
            )
        case .pin:
            let id = identifier(fields["id"]) ?? "p_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let created = text(fields["createdAt"]) ?? now
            return .pin(
                PinRecord(
                    id: id,
                    uniqueKey: text(fields["uniqueKey"]) ?? "",
                    firstName: text(fields["firstName"]) ?? "",
                    lastName: text(fields["lastName"]) ?? "",
                    mapString: text(fields["mapString"]) ?? "",
                    mediaURL: text(fields["mediaURL"]) ?? "",
                    lat: lat,
                    lon: lon,
                    createdAt: created,
                    updatedAt: text(fields["updatedAt"]) ?? created
                )
            )
        }
    }

    static let poiFields: Set<String> = [
        "id", "kind", "name", "category", "address", "city", "country", "lat", "lon", "latitude",
        "longitude", "lng", "tags", "distance",
    ]

    static func isCategory(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                !part.isEmpty && part.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" }
            }
    }

    private func coordinates(_ fields: [String: Any], _ position: (lon: Double, lat: Double)?) throws(Rejection) -> (Double, Double) {
        var lat: Double?
        var lon: Double?
        if let position {
            lat = position.lat
            lon = position.lon
        } else {
            lat = number(fields["lat"] ?? fields["latitude"])
            lon = number(fields["lon"] ?? fields["lng"] ?? fields["longitude"])
        }
        guard let lat else { throw Rejection(reason: "missing coordinate: lat (or latitude) must be a number") }
        guard let lon else { throw Rejection(reason: "missing coordinate: lon (or lng, longitude) must be a number") }
        do {
            let converted = try CoordinateConverter.shared.convert(XY(x: lon, y: lat), from: crs, to: .wgs84)
            let c = try Coordinate(latitude: converted.y, longitude: converted.x)
            return (c.longitude, c.latitude)
        } catch {
            if case .invalidPoint(_, let reason) = error { throw Rejection(reason: reason) }
            throw Rejection(reason: error.description)
        }
    }

    private func number(_ value: Any?) -> Double? {
        switch value {
        case let n as NSNumber:
            // JSON true/false decode as NSNumber of Objective-C type "c": not a number here.
            return String(cString: n.objCType) == "c" ? nil : n.doubleValue
        case let d as Double: return d
        case let i as Int: return Double(i)
        case let s as String: return Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    private func text(_ value: Any?) -> String? {
        switch value {
        case let s as String: return s
        case let n as NSNumber: return n.stringValue
        default: return nil
        }
    }

    private func identifier(_ value: Any?) -> String? {
        guard let id = text(value)?.trimmingCharacters(in: .whitespaces), !id.isEmpty, id.count <= 200 else { return nil }
        return id
    }
}
