import BundledData
import Gazetteer

extension GeocodeResult {
    /// The result as the HTTP API and `--format json` print it; `kind` first when given (`/v1/suggest`'s lists).
    public func write(to json: inout JSONWriter, kind: String? = nil) {
        json.beginObject()
        if let kind {
            json.key("kind")
            json.string(kind)
        }
        json.key("id")
        json.string(id)
        json.key("name")
        json.string(name)
        json.key("displayName")
        json.string(displayName)
        json.field("lat", latitude)
        json.field("lon", longitude)
        json.key("country")
        json.string(country)
        json.key("admin1")
        json.string(admin1)
        json.key("admin2")
        json.string(admin2)
        json.key("population")
        if let population { json.number(population) } else { json.null() }
        json.key("type")
        json.string(type)
        json.field("score", score)
        if let adcode {
            json.key("adcode")
            json.string(adcode)
        }
        if let unresolved {
            json.key("unresolved")
            json.string(unresolved)
        }
        if let distance {
            json.field("distance", (distance * 10).rounded() / 10)
        }
        if let address {
            json.key("address")
            address.write(to: &json)
        }
        if let interpolation {
            json.key("interpolation")
            json.string(interpolation)
        }
        json.endObject()
    }
}

extension AddressComponents {
    /// `{"street", "housenumber", "unit", "postcode", "city"}`, the parts that are known.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        for (key, value): (StaticString, String?) in [
            ("street", street), ("housenumber", housenumber), ("unit", unit), ("postcode", postcode), ("city", city),
        ] {
            if let value {
                json.key(key)
                json.string(value)
            }
        }
        json.endObject()
    }
}

extension ReverseResult {
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("place")
        if let place { place.write(to: &json) } else { json.null() }
        for (key, value): (StaticString, String?) in [
            ("country", country), ("countryName", countryName), ("admin1", admin1), ("admin2", admin2), ("city", city),
        ] {
            json.field(key, orNull: value)
        }
        json.key("division")
        if let division {
            json.beginObject()
            json.field("adcode", division.adcode)
            json.field("province", division.province)
            json.field("city", orNull: division.city)
            json.field("district", orNull: division.district)
            json.field("distance", division.distance)
            json.endObject()
        } else {
            json.null()
        }
        json.key("address")
        if let address { address.write(to: &json) } else { json.null() }
        json.endObject()
    }
}

extension JSONWriter {
    /// A GeoJSON feature's `"geometry"` member: a Point (longitude first).
    mutating func pointGeometry(latitude: Double, longitude: Double) {
        key("geometry")
        beginObject()
        field("type", "Point")
        key("coordinates")
        beginArray()
        number(longitude)
        number(latitude)
        endArray()
        endObject()
    }

    /// A GeoJSON FeatureCollection of `items`: `members` writes the collection's own members (before `features`;
    /// `after` writes those after it), `feature` each feature's members after its `"type": "Feature"`.
    mutating func featureCollection<Item>(
        _ items: some Sequence<Item>,
        members: (inout JSONWriter) -> Void = { _ in },
        after: (inout JSONWriter) -> Void = { _ in },
        feature: (Item, inout JSONWriter) -> Void
    ) {
        beginObject()
        field("type", "FeatureCollection")
        members(&self)
        key("features")
        beginArray()
        for item in items {
            beginObject()
            field("type", "Feature")
            feature(item, &self)
            endObject()
        }
        endArray()
        after(&self)
        endObject()
    }
}
