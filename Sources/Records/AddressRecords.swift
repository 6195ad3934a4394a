import Foundation
import GeoCore

/// A house address: an object with `addr:housenumber` and `addr:street` (or `addr:place`), at a point (a node's
/// location, or a point inside a building's outline).
public struct AddressPoint: Sendable, Equatable {
    /// `osm-n…`, `osm-w…`, `osm-r…`.
    public var id: String
    public var street: String?
    /// `addr:place`: the named place a house belongs to when it has no street (islands, hamlets).
    public var place: String?
    public var housenumber: String
    public var unit: String?
    public var postcode: String?
    public var city: String?
    public var latitude: Double
    public var longitude: Double

    public init(
        id: String,
        street: String?,
        place: String? = nil,
        housenumber: String,
        unit: String? = nil,
        postcode: String? = nil,
        city: String? = nil,
        latitude: Double,
        longitude: Double
    ) {
        self.id = id
        self.street = street
        self.place = place
        self.housenumber = housenumber
        self.unit = unit
        self.postcode = postcode
        self.city = city
        self.latitude = latitude
        self.longitude = longitude
    }

    /// What the house is found by: its street, else its place.
    public var streetOrPlace: String? { street ?? place }

    /// The numbers of an `addr:housenumber` value: a list "1;3" gives each, trimmed; empty parts are dropped.
    public static func numbers(in value: String) -> [String] {
        var numbers: [String] = []
        forEachNumber(in: value) { numbers.append($0) }
        return numbers
    }

    /// The same, each handed to `body` in turn: an import of millions of houses makes no array a house.
    public static func forEachNumber(in value: String, _ body: (String) -> Void) {
        let bytes = value.utf8
        if let first = bytes.first, let last = bytes.last, first != 0x20, first != 0x09, last != 0x20, last != 0x09,
            !bytes.contains(UInt8(ascii: ";"))
        {
            body(value)  // one number without spaces at its ends: nearly all of them
            return
        }
        for part in value.split(separator: ";") {
            let number = part.trimmingCharacters(in: .whitespaces)
            if !number.isEmpty { body(number) }
        }
    }

    /// The houses a record's own `addr:*` tags make (a POI written through the API or imported from JSONL, GeoJSON or
    /// CSV): one per number of `addr:housenumber` (ids `ID`, `ID#2`, …), on `addr:street`, else in `addr:place`, with
    /// `addr:unit` and `addr:postcode`, and `addr:city` or else the record's city. None without a number, or without
    /// both a street and a place.
    public static func houses(id: String, tags: [String: String], city: String?, latitude: Double, longitude: Double) -> [AddressPoint] {
        func value(_ key: String) -> String? {
            guard let raw = tags[key] else { return nil }
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? nil : trimmed
        }
        guard let numbers = tags["addr:housenumber"] else { return [] }
        let street = value("addr:street")
        let place = value("addr:place")
        guard street != nil || place != nil else { return [] }
        let (unit, postcode, city) = (value("addr:unit"), value("addr:postcode"), value("addr:city") ?? city)
        return Self.numbers(in: numbers).enumerated().map { k, number in
            AddressPoint(
                id: k == 0 ? id : "\(id)#\(k + 1)",
                street: street,
                place: place,
                housenumber: number,
                unit: unit,
                postcode: postcode,
                city: city,
                latitude: latitude,
                longitude: longitude
            )
        }
    }
}

/// A line: a named street (a `highway` way with its name variants) or an `addr:interpolation` line.
public struct StreetLine: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case street
        /// `addr:interpolation`: house numbers along the line between its numbered nodes.
        case odd, even, all
    }

    /// `osm-w…`.
    public var id: String
    public var kind: Kind
    /// The primary name first (`name`, or for an interpolation line its `addr:street`), then the variants
    /// (`name:fi`, `name:sv`, `alt_name`, `old_name`, …), without repeats.
    public var names: [String]
    /// (latitude, longitude) vertices in order.
    public var points: [Coordinate2]
    /// For interpolation lines: the house numbers at vertices, as (vertex index, number), in vertex order.
    public var numbers: [NumberedVertex]
    public var city: String?
    public var postcode: String?

    public init(
        id: String,
        kind: Kind = .street,
        names: [String],
        points: [Coordinate2],
        numbers: [NumberedVertex] = [],
        city: String? = nil,
        postcode: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.names = names
        self.points = points
        self.numbers = numbers
        self.city = city
        self.postcode = postcode
    }
}

/// A vertex of an interpolation line that carries a house number.
public struct NumberedVertex: Sendable, Equatable {
    public var vertex: Int
    public var number: Int

    public init(vertex: Int, number: Int) { (self.vertex, self.number) = (vertex, number) }
}

/// Every address, street line and map area (water, buildings) a store holds: what an OpenStreetMap import makes
/// beside its POIs.
public struct AddressData: Sendable, Equatable {
    /// The houses, in blocks (`HouseList`).
    public var addresses: HouseList
    public var streets: [StreetLine]
    /// Water and buildings for the `base` tiles, in the order of their objects (`OSMObjectKey`), the sea last; coded
    /// as the stores keep them (`AreaList`).
    public var areas: AreaList

    /// Houses and areas given as lists of their own are kept as they are; given as other sequences (arrays of
    /// records), they are coded into lists.
    public init<Houses: Sequence<AddressPoint>, Areas: Sequence<MapArea>>(
        addresses: Houses = HouseList(),
        streets: [StreetLine] = [],
        areas: Areas = AreaList()
    ) {
        self.addresses = addresses as? HouseList ?? HouseList(addresses)
        self.streets = streets
        self.areas = areas as? AreaList ?? AreaList(areas)
    }

    public var isEmpty: Bool { addresses.isEmpty && streets.isEmpty && areas.isEmpty }
}

extension AddressData {
    /// The addresses as a store reads them back (SQLite's `street_line`, PostgreSQL's street blocks): street vertices at
    /// OSM's precision of 1e-7° (areas are coded so already), the rest as given. An index built from these at import equals one built from the
    /// store.
    public var asStored: AddressData {
        // Only what changes is copied: an OpenStreetMap import's points are in 1e-7° already, so its millions of
        // streets are shared, not copied. Houses keep their Doubles, and areas are coded in 1e-7° (`AreaList`).
        func changes(_ points: [Coordinate2]) -> Bool {
            points.contains { Self.storedDegrees($0.latitude) != $0.latitude || Self.storedDegrees($0.longitude) != $0.longitude }
        }
        var data = self
        for i in data.streets.indices where changes(data.streets[i].points) {
            data.streets[i].points = data.streets[i].points.map { Coordinate2(Self.storedDegrees($0.latitude), Self.storedDegrees($0.longitude)) }
        }
        return data
    }

    /// A coordinate as the stores keep it, in units of 1e-7°.
    @inline(__always) public static func storedUnits(_ degrees: Double) -> Int32 { Int32((degrees * 1e7).rounded()) }

    /// A coordinate as the stores give it back.
    @inline(__always) public static func storedDegrees(_ degrees: Double) -> Double { Double(storedUnits(degrees)) / 1e7 }
}
