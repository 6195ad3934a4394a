import BundledData
import Foundation
import Gazetteer
import GeoCore
import HTTPTypes
import Records
import SearchEngine
import TextIndex

/// AMap (高德) Web Service API at the root (`/v3/…`, `/v5/…`: amap-python-sdk drops any path prefix), over the same
/// engine and gazetteer as v1. Coordinates are GCJ-02 in and out, as "lng,lat" strings; the envelope is AMap's
/// string-typed `status`/`info`/`infocode`/`count`; errors are business errors (`status` "0", HTTP 200) with AMap's
/// infocodes; `callback` wraps the answer as JSONP; `output` is case-insensitive; `key` is accepted (any value).
/// v3 `count` is the total (counted up to 1 000), v5 `count` the POIs in this answer. Record types come from
/// `data/categories.json` (`amap_typecode`, `amap_type`); pname/cityname/adname from the Chinese divisions.
public struct AMapAdapter: Sendable {
    let engine: SearchEngine
    /// The process's one geocoder (nil: no gazetteer is loaded).
    let geocoder: Geocoder?
    var gazetteer: Gazetteer? { geocoder?.gazetteer }
    let types: AMapTypes

    public init(engine: SearchEngine, geocoder: Geocoder?, types: AMapTypes) {
        self.engine = engine
        self.geocoder = geocoder
        self.types = types
    }

    /// The operations, by operationId of the route table: each a function of the query string.
    public var operations: [(operationId: String, answer: @Sendable (QueryParameters) -> AdapterAnswer)] {
        [
            ("amapV3PlaceText", { p in answer(p) { p in try placeText(p, v5: false) } }),
            ("amapV3PlaceAround", { p in answer(p) { p in try placeAround(p, v5: false) } }),
            ("amapV3PlacePolygon", { p in answer(p) { p in try placePolygon(p, v5: false) } }),
            ("amapV3PlaceDetail", { p in answer(p) { p in try placeDetail(p, v5: false) } }),
            ("amapV5PlaceText", { p in answer(p) { p in try placeText(p, v5: true) } }),
            ("amapV5PlaceAround", { p in answer(p) { p in try placeAround(p, v5: true) } }),
            ("amapV5PlacePolygon", { p in answer(p) { p in try placePolygon(p, v5: true) } }),
            ("amapV5PlaceDetail", { p in answer(p) { p in try placeDetail(p, v5: true) } }),
            ("amapGeocode", { p in answer(p) { p in try geocode(p) } }),
            ("amapRegeocode", { p in answer(p) { p in try regeocode(p) } }),
            ("amapConvert", { p in answer(p, info: "ok") { p in try convert(p) } }),
            ("amapInputTips", { p in answer(p) { p in try inputTips(p) } }),
        ]
    }

    /// How far counting goes for v3's `count` (AMap itself lets clients page through 200 at most).
    static let countLimit = 1_000

    // MARK: Envelope, errors, JSONP

    /// An AMap business error: `info` and `infocode`.
    struct AMapError: Error {
        let info: String
        let infocode: String
        let detail: String

        static func invalid(_ detail: String) -> AMapError { AMapError(info: "INVALID_PARAMS", infocode: "20000", detail: detail) }
        static func missing(_ name: String) -> AMapError {
            AMapError(info: "MISSING_REQUIRED_PARAMS", infocode: "20001", detail: "\(name) is required")
        }
    }

    /// Runs `body` (which writes the fields after the envelope) and answers AMap's envelope, as JSON or JSONP.
    func answer(_ p: QueryParameters, info: String = "OK", _ body: (QueryParameters) throws -> (inout JSONWriter) -> Void) -> AdapterAnswer {
        var callback: String?
        var json = JSONWriter()
        do {
            if let name = p.string("callback") {
                guard name.range(of: #"^[A-Za-z_$][A-Za-z0-9_$.]{0,99}$"#, options: .regularExpression) != nil else {
                    throw AMapError.invalid("callback must be a JavaScript identifier")
                }
                callback = name
            }
            if let output = p.string("output"), output.lowercased() != "json" {
                throw AMapError.invalid("output must be JSON (XML is not served)")
            }
            let fields = try body(p)
            json.beginObject()
            json.field("status", "1")
            json.field("info", info)
            json.field("infocode", "10000")
            fields(&json)
            json.endObject()
        } catch {
            let failure: AMapError
            switch error {
            case let error as AMapError: failure = error
            case let error as SearchError: failure = .invalid(error.description)
            case let error as GazetteerError: failure = .invalid(error.description)
            case let error as GeoError: failure = .invalid(error.description)
            case let error as ParameterError: failure = .invalid(error.description)
            default: failure = AMapError(info: "UNKNOWN_ERROR", infocode: "20003", detail: "the request could not be completed")
            }
            json = JSONWriter()
            json.beginObject()
            json.field("status", "0")
            json.field("info", failure.info)
            json.field("infocode", failure.infocode)
            json.field("detail", failure.detail)
            json.endObject()
        }
        if let callback {
            var bytes = Array(callback.utf8) + Array("(".utf8)
            bytes += json.buffer
            bytes += Array(")".utf8)
            return AdapterAnswer(status: .ok, contentType: "application/javascript;charset=utf-8", body: bytes)
        }
        return AdapterAnswer(status: .ok, contentType: "application/json;charset=utf-8", body: json.buffer)
    }

    // MARK: Parameters

    /// "lng,lat" in GCJ-02 → WGS-84.
    static func location(_ text: String, name: String) throws -> Coordinate {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { TextNormalizer.trimmed($0) }
        guard parts.count == 2, let lon = DecimalNumber.parse(parts[0][...]), let lat = DecimalNumber.parse(parts[1][...]) else {
            throw AMapError.invalid("\(name) must be \"lng,lat\"")
        }
        let point = try Coordinate(latitude: lat, longitude: lon)
        return CRS.Geographic.gcj02.toWGS84(point)
    }

    /// AMap's direction of `to` as seen from `from`: 东, 东北, 北, … (eight sectors).
    static func direction(from: Coordinate, to: Coordinate) -> String {
        let bearing = GreatCircle.initialBearing(from: from, to: to)
        return ["北", "东北", "东", "东南", "南", "西南", "西", "西北"][Int(((bearing + 22.5) / 45).rounded(.down)) % 8]
    }

    static func format(_ point: (latitude: Double, longitude: Double)) -> String {
        let gcj = CRS.Geographic.gcj02.fromWGS84(latitude: point.latitude, longitude: point.longitude)
        return fixed6(gcj.longitude) + "," + fixed6(gcj.latitude)
    }

    /// A coordinate with six decimals, as `String(format: "%.6f")` writes it (rounded half away from zero) without
    /// Foundation's formatter, which took 8 % of an input tips request.
    static func fixed6(_ value: Double) -> String {
        let scaled = (abs(value) * 1_000_000).rounded()
        guard scaled < 1e15 else { return String(format: "%.6f", value) }
        var micro = UInt64(scaled)
        let negative = value < 0 && micro != 0
        // Digits from the last, at the end of the buffer, then moved to its start: at most 17 bytes.
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var i = 23
            for _ in 0..<6 {
                buffer[i] = UInt8(ascii: "0") + UInt8(micro % 10)
                micro /= 10
                i -= 1
            }
            buffer[i] = UInt8(ascii: ".")
            i -= 1
            repeat {
                buffer[i] = UInt8(ascii: "0") + UInt8(micro % 10)
                micro /= 10
                i -= 1
            } while micro > 0
            if negative {
                buffer[i] = UInt8(ascii: "-")
                i -= 1
            }
            let count = 23 - i
            for j in 0..<count { buffer[j] = buffer[i + 1 + j] }
            return count
        }
    }

    static func integer(_ p: QueryParameters, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = p.string(name), !text.isEmpty else { return value }
        guard let n = DecimalNumber.parseInteger(Substring(text)), range.contains(n) else {
            throw AMapError.invalid("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    static func keywords(_ p: QueryParameters) -> String? {
        guard let text = p.string("keywords").map({ TextNormalizer.trimmed($0) }), !text.isEmpty else { return nil }
        // The older API took several keywords separated by "|": one query of all the words.
        return text.utf8.contains(UInt8(ascii: "|")) ? String(text.map { $0 == "|" ? " " : $0 }) : text
    }

    /// The page: v3 offset/page (offset ≤ 50), v5 page_size/page_num (≤ 25, ≤ 100).
    static func page(_ p: QueryParameters, v5: Bool) throws -> (size: Int, number: Int) {
        if v5 {
            return (try integer(p, "page_size", default: 10, range: 1...25), try integer(p, "page_num", default: 1, range: 1...100))
        }
        return (try integer(p, "offset", default: 20, range: 1...50), try integer(p, "page", default: 1, range: 1...100))
    }

    // MARK: POI search

    /// The categories named by `types` (typecodes or Chinese names, "|"-separated); nil when not given.
    func categories(_ p: QueryParameters) throws -> [String]? {
        guard let text = p.string("types"), !text.isEmpty else { return nil }
        var found: [String] = []
        for item in text.split(separator: "|").map({ TextNormalizer.trimmed($0) }) where !item.isEmpty {
            let matches = types.categories(for: item)
            guard !matches.isEmpty else { throw AMapError.invalid("types: \(item) names no category of this server") }
            found += matches
        }
        return Array(Set(found)).sorted()
    }

    /// POIs of one answer with their distances, and the total counted up to `countLimit`.
    typealias Found = (hits: [(POIRecord, Double?)], total: Int)

    static func pois(_ hits: [Hit]) -> [(POIRecord, Double?)] {
        hits.compactMap { hit in
            guard case .poi(let poi) = hit.record else { return nil }
            return (poi, hit.distance)
        }
    }

    /// What a place search asks for besides its area: keywords, categories and the page.
    struct Selection {
        let keywords: String?
        let categories: [String]
        let size: Int
        let offset: Int
    }

    func selection(_ p: QueryParameters, v5: Bool) throws -> Selection {
        let (size, number) = try Self.page(p, v5: v5)
        return Selection(keywords: Self.keywords(p), categories: try categories(p) ?? [], size: size, offset: (number - 1) * size)
    }

    /// The POIs of an engine page, and its total.
    static func found(_ page: Page) -> Found { (pois(page.results), page.total ?? 0) }

    /// A city given as a Chinese name, citycode or adcode: its seat, to favour (or with citylimit, keep) results near.
    func cityOrigin(_ text: String?) -> Coordinate? {
        guard let text, !text.isEmpty, let gazetteer else { return nil }
        // An adcode ("110108"): its division's seat.
        if text.count == 6, let code = Int(text), let division = gazetteer.division(adcode: code) {
            return Coordinate(uncheckedLatitude: division.latitude, longitude: division.longitude)
        }
        // A city parameter names a division or a place, never a street or a house: the gazetteer's places alone.
        guard let query = try? GeocodeQuery(text: text, limit: 1) else { return nil }
        guard let place = gazetteer.geocode(query).first else { return nil }
        return Coordinate(uncheckedLatitude: place.latitude, longitude: place.longitude)
    }

    func placeText(_ p: QueryParameters, v5: Bool) throws -> (inout JSONWriter) -> Void {
        let keywords = Self.keywords(p)
        let categories = try categories(p)
        guard keywords != nil || categories != nil else { throw AMapError.missing("keywords or types") }
        let (size, number) = try Self.page(p, v5: v5)
        let origin = cityOrigin(p.string(v5 ? "region" : "city"))
        let cityLimit = (p.string(v5 ? "city_limit" : "citylimit") ?? "false").lowercased() == "true"
        let box = cityLimit ? origin.map { Self.box(around: $0, metres: 60_000) } : nil
        let offset = (number - 1) * size
        let found: Found
        if let keywords {
            // Keyword search says its total.
            found = Self.found(
                try engine.search(SearchQuery(text: keywords, origin: origin, bbox: box, categories: categories ?? [], limit: size, offset: offset))
            )
        } else {
            let area = box ?? BoundingBox(uncheckedWest: -180, south: -90, east: 180, north: 90)
            found = Self.found(
                engine.within(
                    WithinQuery(.box(area), categories: categories ?? [], limit: size, offset: offset, countUpTo: Self.countLimit)
                )
            )
        }
        return pois(found, v5: v5, p)
    }

    func placeAround(_ p: QueryParameters, v5: Bool) throws -> (inout JSONWriter) -> Void {
        guard let text = p.string("location") else { throw AMapError.missing("location") }
        let origin = try Self.location(text, name: "location")
        var radius = try Self.integer(p, "radius", default: 5_000, range: 0...1_000_000)
        if radius > 50_000 || radius == 0 { radius = 5_000 }  // AMap: out of range uses the default
        let s = try selection(p, v5: v5)
        let query = NearbyQuery(
            Around(origin, radius: Double(radius)),
            text: s.keywords,
            categories: s.categories,
            limit: s.size,
            offset: s.offset,
            countUpTo: Self.countLimit
        )
        return pois(Self.found(engine.nearby(query)), v5: v5, p)
    }

    func placePolygon(_ p: QueryParameters, v5: Bool) throws -> (inout JSONWriter) -> Void {
        guard let text = p.string("polygon"), !text.isEmpty else { throw AMapError.missing("polygon") }
        // Both "|" (the API) and ";" (the doc's prose, and crawlers) separate points.
        let points = try text.split(whereSeparator: { $0 == "|" || $0 == ";" }).map { try Self.location(String($0), name: "polygon") }
        let area: QueryArea
        if points.count == 2 {
            // Two points: a rectangle, top-left and bottom-right (either order accepted).
            area = .box(
                try BoundingBox(
                    west: min(points[0].longitude, points[1].longitude),
                    south: min(points[0].latitude, points[1].latitude),
                    east: max(points[0].longitude, points[1].longitude),
                    north: max(points[0].latitude, points[1].latitude)
                )
            )
        } else {
            var vertices = points
            if vertices.count > 3, vertices.first == vertices.last { vertices.removeLast() }
            guard vertices.count >= 3 else { throw AMapError.invalid("polygon needs at least 3 points (or 2 for a rectangle)") }
            area = .polygon(try Polygon(vertices: vertices))
        }
        let s = try selection(p, v5: v5)
        let query = WithinQuery(area, text: s.keywords, categories: s.categories, limit: s.size, offset: s.offset, countUpTo: Self.countLimit)
        return pois(Self.found(engine.within(query)), v5: v5, p)
    }

    func placeDetail(_ p: QueryParameters, v5: Bool) throws -> (inout JSONWriter) -> Void {
        guard let text = p.string("id"), !text.isEmpty else { throw AMapError.missing("id") }
        let ids = text.split(separator: "|").map(String.init)
        guard ids.count <= 10 else { throw AMapError.invalid("id takes at most 10 ids") }
        let hits: [(POIRecord, Double?)] = ids.compactMap { id in engine.poi(id: id).map { ($0, nil) } }
        return pois((hits, hits.count), v5: v5, extensions: p.string("extensions") ?? "all", showFields: p.string("show_fields"))
    }

    static func box(around point: Coordinate, metres: Double) -> BoundingBox {
        let dy = metres / 111_320
        let dx = dy / max(0.01, cos(point.latitude * .pi / 180))
        return BoundingBox(
            uncheckedWest: max(-180, point.longitude - dx),
            south: max(-90, point.latitude - dy),
            east: min(180, point.longitude + dx),
            north: min(90, point.latitude + dy)
        )
    }

    // MARK: POI encoding

    /// Province, city and district of a point in China, from the Chinese divisions.
    struct Divisions {
        var pname = "", pcode = "", cityname = "", citycode = "", adname = "", adcode = ""
    }

    func divisions(latitude: Double, longitude: Double, city: String?) -> Divisions {
        var result = Divisions()
        if let gazetteer, let match = gazetteer.division(at: Coordinate(uncheckedLatitude: latitude, longitude: longitude)) {
            result.pname = match.province
            result.pcode = String(match.adcode.prefix(2)) + "0000"
            result.cityname = match.city ?? match.province  // municipalities: the province is the city
            result.adname = match.district ?? ""
            result.adcode = match.adcode
        } else {
            result.cityname = city ?? ""
        }
        return result
    }

    /// The POIs as the request's `extensions` and `show_fields` ask.
    private func pois(_ found: Found, v5: Bool, _ p: QueryParameters) -> (inout JSONWriter) -> Void {
        pois(found, v5: v5, extensions: p.string("extensions"), showFields: p.string("show_fields"))
    }

    private func pois(_ found: Found, v5: Bool, extensions: String?, showFields: String?) -> (inout JSONWriter) -> Void {
        let all = (extensions ?? "base").lowercased() == "all"
        let fields = Set((showFields ?? "").split(separator: ",").map { TextNormalizer.trimmed($0) })
        return { json in
            json.field("count", String(v5 ? found.hits.count : found.total))
            if !v5 {
                json.key("suggestion")
                json.beginObject()
                json.key("keywords")
                json.beginArray()
                json.endArray()
                json.key("cities")
                json.beginArray()
                json.endArray()
                json.endObject()
            }
            json.key("pois")
            json.beginArray()
            for (poi, distance) in found.hits {
                write(poi, distance: distance, v5: v5, all: all, fields: fields, to: &json)
            }
            json.endArray()
        }
    }

    private func write(_ poi: POIRecord, distance: Double?, v5: Bool, all: Bool, fields: Set<String>, to json: inout JSONWriter) {
        let type = types.type(of: poi.category)
        let places = divisions(latitude: poi.lat, longitude: poi.lon, city: poi.city)
        let tel = poi.tags["phone"] ?? ""
        json.beginObject()
        json.field("id", poi.id)
        json.field("parent", "")
        json.field("name", poi.name)
        json.field("type", type.name)
        json.field("typecode", type.code)
        json.field("address", poi.address ?? "")
        json.field("location", Self.format((poi.lat, poi.lon)))
        if v5 {
            if let distance { json.field("distance", String(Int(distance.rounded()))) }
        } else {
            json.field("biz_type", "")
            json.field("distance", distance.map { String(Int($0.rounded())) } ?? "")
            json.field("tel", tel)
        }
        json.field("pname", places.pname)
        json.field("pcode", places.pcode)
        json.field("cityname", places.cityname)
        json.field("citycode", places.citycode)
        json.field("adname", places.adname)
        json.field("adcode", places.adcode)
        if !v5 && all {
            json.field("postcode", "")
            json.field("website", poi.tags["website"] ?? "")
            json.field("email", "")
            json.field("entr_location", "")
            json.key("biz_ext")
            json.beginObject()
            json.field("rating", "")
            json.field("cost", "")
            json.field("opentime", poi.tags["opening_hours"] ?? "")
            json.endObject()
        }
        if !v5 || fields.contains("photos") {
            json.key("photos")
            json.beginArray()
            json.endArray()
        }
        if v5 && fields.contains("business") {
            json.key("business")
            json.beginObject()
            json.field("tel", tel)
            json.field("opentime_week", poi.tags["opening_hours"] ?? "")
            json.field("business_area", "")
            json.endObject()
        }
        if v5 && fields.contains("children") {
            json.key("children")
            json.beginArray()
            json.endArray()
        }
        json.endObject()
    }

    // MARK: Geocoding

    func geocode(_ p: QueryParameters) throws -> (inout JSONWriter) -> Void {
        guard let address = p.string("address").map({ TextNormalizer.trimmed($0) }), !address.isEmpty else { throw AMapError.missing("address") }
        guard let geocoder else { throw AMapError(info: "SERVICE_NOT_AVAILABLE", infocode: "10002", detail: "the gazetteer is not loaded") }
        let gazetteer = geocoder.gazetteer
        let batch = (p.string("batch") ?? "false").lowercased() == "true"
        let addresses = batch ? address.split(separator: "|").map(String.init) : [address]
        guard addresses.count <= 10 else { throw AMapError.invalid("batch takes at most 10 addresses") }
        let city = p.string("city").map { TextNormalizer.trimmed($0) }
        // formatted, position, level, divisions, country, street, number
        var answers: [(String, (latitude: Double, longitude: Double), String, Divisions, String, String, String)] = []
        for text in addresses {
            let full = city.map { !$0.isEmpty && !text.contains($0) ? $0 + text : text } ?? text
            // One ranking of houses, streets, places and POIs (the Geocoder's), its best answer at AMap's level.
            switch try geocoder.search(full, limit: 1, language: "zh", near: nil, countries: nil, box: nil)
                .first
            {
            case .place(let place)?:
                if let parts = place.address {
                    // A house (门牌号) or a street (道路) of the imported addresses.
                    let d = divisions(latitude: place.latitude, longitude: place.longitude, city: parts.city)
                    let inChina = place.country == "CN"
                    let formatted =
                        inChina
                        ? [d.pname, d.cityname == d.pname ? "" : d.cityname, d.adname, parts.street ?? "", parts.housenumber.map { $0 + "号" } ?? ""]
                            .joined()
                        : parts.formatted
                    let country = inChina ? "中国" : (gazetteer.countryName(place.country) ?? place.country)
                    answers.append(
                        (
                            formatted, (place.latitude, place.longitude), place.type == "house" ? "门牌号" : "道路", d, country, parts.street ?? "",
                            parts.housenumber ?? ""
                        )
                    )
                } else {
                    let level: String
                    switch place.type {
                    case "province": level = "省"
                    case "prefecture": level = "市"
                    case "district": level = "区县"
                    default: level = "市"
                    }
                    let d = divisions(latitude: place.latitude, longitude: place.longitude, city: place.name)
                    let formatted = place.adcode != nil ? place.displayName + (place.unresolved ?? "") : place.displayName
                    answers.append(
                        (
                            formatted, (place.latitude, place.longitude), level, d,
                            place.country == "CN" ? "中国" : (gazetteer.countryName(place.country) ?? place.country), "", ""
                        )
                    )
                }
            case .poi(let poi, _)?:
                // A POI of that name (AMap's 兴趣点 level).
                let d = divisions(latitude: poi.lat, longitude: poi.lon, city: poi.city)
                let formatted = [d.pname, d.cityname == d.pname ? "" : d.cityname, d.adname, poi.name].joined()
                let country = poi.country.map { $0 == "CN" ? "中国" : (gazetteer.countryName($0) ?? $0) } ?? ""
                answers.append((formatted.isEmpty ? poi.name : formatted, (poi.lat, poi.lon), "兴趣点", d, country, "", ""))
            case nil:
                break
            }
        }
        return { json in
            json.field("count", String(answers.count))
            json.key("geocodes")
            json.beginArray()
            for (formatted, position, level, d, country, street, number) in answers {
                json.beginObject()
                json.field("formatted_address", formatted)
                json.field("country", country)
                json.field("province", d.pname)
                json.field("citycode", d.citycode)
                json.field("city", d.cityname)
                json.field("district", d.adname)
                json.field("township", "")
                Self.writeEmptyNeighborhoodAndBuilding(to: &json)
                json.field("adcode", d.adcode)
                json.field("street", street)
                json.field("number", number)
                json.field("location", Self.format(position))
                json.field("level", level)
                json.endObject()
            }
            json.endArray()
        }
    }

    /// AMap's `neighborhood` and `building` objects, which the bundled data cannot fill: present, with empty fields,
    /// as clients read them.
    static func writeEmptyNeighborhoodAndBuilding(to json: inout JSONWriter) {
        for key: StaticString in ["neighborhood", "building"] {
            json.key(key)
            json.beginObject()
            json.field("name", "")
            json.field("type", "")
            json.endObject()
        }
    }

    func regeocode(_ p: QueryParameters) throws -> (inout JSONWriter) -> Void {
        guard let text = p.string("location") else { throw AMapError.missing("location") }
        guard let geocoder else { throw AMapError(info: "SERVICE_NOT_AVAILABLE", infocode: "10002", detail: "the gazetteer is not loaded") }
        let batch = (p.string("batch") ?? "false").lowercased() == "true"
        let points = try (batch ? text.split(separator: "|").map(String.init) : [text]).map { try Self.location($0, name: "location") }
        guard points.count <= 20 else { throw AMapError.invalid("location takes at most 20 points") }
        let radius = try Self.integer(p, "radius", default: 1_000, range: 0...3_000)
        let all = (p.string("extensions") ?? "base").lowercased() == "all"
        let answers = points.map { point -> (ReverseResult, Divisions, [Hit], Coordinate) in
            let reverse = geocoder.areas(around: point)
            let d = divisions(latitude: point.latitude, longitude: point.longitude, city: reverse.city ?? reverse.place?.name)
            let nearby = all && radius > 0 ? engine.nearby(NearbyQuery(Around(point, radius: Double(max(radius, 1))), limit: 20)).results : []
            return (reverse, d, nearby, point)
        }
        return { json in
            func component(_ reverse: ReverseResult, _ d: Divisions, _ nearby: [Hit], _ point: Coordinate) {
                json.beginObject()
                let inChina = !d.adcode.isEmpty
                let formatted =
                    inChina
                    ? [d.pname, d.cityname == d.pname ? "" : d.cityname, d.adname].joined()
                    : reverse.country == nil
                        ? "" : [reverse.city ?? reverse.place?.name, reverse.admin1, reverse.countryName].compactMap { $0 }.joined(separator: ", ")
                json.field("formatted_address", formatted)
                json.key("addressComponent")
                json.beginObject()
                json.field("country", inChina ? "中国" : (reverse.countryName ?? ""))
                json.field("province", inChina ? d.pname : (reverse.admin1 ?? ""))
                json.field("city", inChina ? (d.cityname == d.pname ? "" : d.cityname) : (reverse.city ?? reverse.place?.name ?? ""))
                json.field("citycode", "")
                json.field("district", d.adname)
                json.field("adcode", d.adcode)
                json.field("township", "")
                json.field("towncode", "")
                Self.writeEmptyNeighborhoodAndBuilding(to: &json)
                // The nearest house (within 60 m) as AMap's streetNumber; empty fields when there is none.
                let house = reverse.address.flatMap { $0.type == "house" ? $0 : nil }
                json.key("streetNumber")
                json.beginObject()
                json.field("street", house?.address?.street ?? "")
                json.field("number", house?.address?.housenumber ?? "")
                json.field("location", house.map { Self.format(($0.latitude, $0.longitude)) } ?? "")
                json.field(
                    "direction",
                    house.map { Self.direction(from: point, to: Coordinate(uncheckedLatitude: $0.latitude, longitude: $0.longitude)) } ?? ""
                )
                json.field("distance", house.map { String(format: "%.1f", $0.distance ?? 0) } ?? "")
                json.endObject()
                json.key("businessAreas")
                json.beginArray()
                json.endArray()
                json.endObject()
                if all {
                    json.key("pois")
                    json.beginArray()
                    for hit in nearby {
                        guard case .poi(let poi) = hit.record else { continue }
                        let type = types.type(of: poi.category)
                        json.beginObject()
                        json.field("id", poi.id)
                        json.field("name", poi.name)
                        json.field("type", type.name)
                        json.field("tel", poi.tags["phone"] ?? "")
                        json.field("direction", "")
                        json.field("distance", String(Int((hit.distance ?? 0).rounded())))
                        json.field("location", Self.format((poi.lat, poi.lon)))
                        json.field("address", poi.address ?? "")
                        json.field("poiweight", "")
                        json.field("businessarea", "")
                        json.endObject()
                    }
                    json.endArray()
                    for key: StaticString in ["roads", "roadinters", "aois"] {
                        json.key(key)
                        json.beginArray()
                        json.endArray()
                    }
                }
                json.endObject()
            }
            if batch {
                json.key("regeocodes")
                json.beginArray()
                for (reverse, d, nearby, point) in answers { component(reverse, d, nearby, point) }
                json.endArray()
            } else {
                json.key("regeocode")
                component(answers[0].0, answers[0].1, answers[0].2, answers[0].3)
            }
        }
    }

    // MARK: Coordinate conversion

    func convert(_ p: QueryParameters) throws -> (inout JSONWriter) -> Void {
        guard let text = p.string("locations"), !text.isEmpty else { throw AMapError.missing("locations") }
        let pairs = text.split(separator: "|").map(String.init)
        guard pairs.count <= 40 else { throw AMapError.invalid("locations takes at most 40 points") }
        let system = (p.string("coordsys") ?? "autonavi").lowercased()
        var converted: [String] = []
        for pair in pairs {
            let parts = pair.split(separator: ",", omittingEmptySubsequences: false).map { TextNormalizer.trimmed($0) }
            guard parts.count == 2, let lon = DecimalNumber.parse(parts[0][...]), let lat = DecimalNumber.parse(parts[1][...]) else {
                throw AMapError.invalid("locations must be \"lng,lat\" pairs separated by |")
            }
            _ = try Coordinate(latitude: lat, longitude: lon)
            let gcj: (latitude: Double, longitude: Double)
            switch system {
            case "gps": gcj = ChinaDatum.wgs84ToGCJ02(latitude: lat, longitude: lon)
            case "baidu": gcj = ChinaDatum.bd09ToGCJ02(latitude: lat, longitude: lon)
            case "autonavi": gcj = (lat, lon)
            case "mapbar": throw AMapError.invalid("coordsys mapbar is not supported (its offset is proprietary)")
            default: throw AMapError.invalid("coordsys must be gps, baidu, autonavi or mapbar")
            }
            converted.append(String(format: "%.12f,%.12f", gcj.longitude, gcj.latitude))
        }
        return { json in json.field("locations", converted.joined(separator: ";")) }
    }
}

/// AMap's POI classes for this server's categories (`amap_typecode`, `amap_type` in data/categories.json), and the
/// categories a `types` item names (a typecode at any level, or a Chinese name).
public struct AMapTypes: Sendable {
    struct Entry: Sendable {
        let category: String
        let code: String
        let name: String
        let prefixes: [String]
        let chinese: [String]
    }

    let entries: [String: Entry]

    public static func load(path: String) -> AMapTypes {
        guard let data = FileManager.default.contents(atPath: path),
            let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let categories = root["categories"] as? [[String: Any]]
        else { return AMapTypes(entries: [:]) }
        var entries: [String: Entry] = [:]
        for category in categories {
            guard let id = category["id"] as? String else { continue }
            entries[id] = Entry(
                category: id,
                code: category["amap_typecode"] as? String ?? "",
                name: category["amap_type"] as? String ?? "",
                prefixes: category["amap"] as? [String] ?? [],
                chinese: category["zh"] as? [String] ?? []
            )
        }
        return AMapTypes(entries: entries)
    }

    /// The class of a category, or of its nearest ancestor that has one.
    func type(of category: String) -> (code: String, name: String) {
        var key = category
        while true {
            if let entry = entries[key], !entry.code.isEmpty { return (entry.code, entry.name) }
            guard let dot = key.lastIndex(of: ".") else { return ("", "") }
            key = String(key[..<dot])
        }
    }

    /// Categories named by a typecode (050000 ⊃ 050500 ⊃ 050501) or a Chinese name.
    func categories(for item: String) -> [String] {
        if item.allSatisfy(\.isNumber) {
            var prefix = Substring(item)
            while prefix.count > 2 && prefix.hasSuffix("00") { prefix = prefix.dropLast(2) }
            return entries.values.filter { entry in
                entry.prefixes.contains { $0.hasPrefix(prefix) || prefix.hasPrefix($0) } || entry.code.hasPrefix(prefix)
            }.map(\.category).sorted()
        }
        return entries.values.filter { $0.chinese.contains(item) || $0.name.split(separator: ";").contains { $0 == item } }.map(\.category).sorted()
    }
}
