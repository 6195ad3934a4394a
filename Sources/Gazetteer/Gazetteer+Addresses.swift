import GeoCore
import TextIndex

extension Gazetteer {
    /// Houses, streets and places matching an address or place name, best first: `AddressBook.search` for houses
    /// and streets, `geocode(_:)` for places, ranked together by score (a house outranks any place; a street asked
    /// by name alone ranks by its name's match like a place without importance).
    public func geocode(_ query: GeocodeQuery, addresses: AddressBook) -> [GeocodeResult] {
        guard !addresses.isEmpty else { return geocode(query) }
        var results = addresses.search(query) { name, point in placeNear(name, point) }.compactMap { match -> GeocodeResult? in
            let result = addressResult(match, language: query.language, near: query.near)
            if let country = query.country, result.country != country { return nil }
            return result
        }
        // A query a house or street answers, or one with a house number, is an address: places are looked up as typed
        // (and by prefix), not among the spelling neighbours of every place name, which would cost more than the rest
        // of the query and find only unrelated places.
        let isAddress = !results.isEmpty || query.readings.contains { $0.number != nil }
        let places = geocode(query, placeTypos: !isAddress)
        // A place answer that only stands for the street address found here ("Helsinki [+Mannerheimintie 13]") is
        // dropped when a house or street answers it.
        let answered = !results.isEmpty && results[0].type == "house"
        results.append(contentsOf: places.filter { !(answered && $0.unresolved != nil) })
        results.sort { $0.score > $1.score }
        return Array(results.prefix(query.limit))
    }

    /// Houses and streets as a search box completes the text (`AddressIndex.complete`), as geocoding answers.
    public func complete(_ query: GeocodeQuery, addresses: AddressBook) -> [GeocodeResult] {
        addresses.complete(query.text, near: query.near, limit: query.limit).compactMap { match in
            let result = addressResult(match, language: query.language, near: query.near)
            if let country = query.country, result.country != country { return nil }
            return result
        }
    }

    /// `geocode(_:addresses:)` over an address index alone.
    public func geocode(_ query: GeocodeQuery, addresses: AddressIndex) -> [GeocodeResult] { geocode(query, addresses: AddressBook(base: addresses)) }

    /// `reverse(_:addresses:)` over an address index alone.
    public func reverse(_ point: Coordinate, addresses: AddressIndex) -> ReverseResult { reverse(point, addresses: AddressBook(base: addresses)) }

    /// Reverse geocoding with the nearest house or street from `addresses` (see `AddressBook.reverse`).
    public func reverse(_ point: Coordinate, addresses: AddressBook) -> ReverseResult {
        var result = reverse(point)
        if let hit = addresses.reverse(Coordinate2(point.latitude, point.longitude)) {
            let answer = addressResult(hit.match, language: .en, near: nil)
            result.address = GeocodeResult(
                id: answer.id,
                name: answer.name,
                displayName: answer.displayName,
                latitude: answer.latitude,
                longitude: answer.longitude,
                country: answer.country,
                admin1: answer.admin1,
                admin2: answer.admin2,
                population: nil,
                type: answer.type,
                score: answer.score,
                adcode: nil,
                unresolved: nil,
                distance: (hit.distance * 10).rounded() / 10,
                address: answer.address
            )
        }
        return result
    }

    /// Whether a normalized name is a place within 30 km of a point: true or false for a name the gazetteer knows
    /// (exactly, or as an alternate name or country), nil for one it does not.
    func placeNear(_ name: String, _ point: Coordinate2) -> Bool? {
        if countryCodes[name] != nil { return nil }
        let found = candidates(name, allowPrefix: false, allowTypos: false)
        guard !found.isEmpty else { return nil }
        let here = Coordinate(uncheckedLatitude: point.latitude, longitude: point.longitude)
        return found.contains { GreatCircle.distance(position(of: $0.0), here) <= 30_000 }
    }

    /// A house or street as a geocoding result, with the country and areas of the place it lies in.
    func addressResult(_ match: AddressMatch, language: GeocodeQuery.Language, near: Coordinate?) -> GeocodeResult {
        let point = Coordinate(uncheckedLatitude: match.latitude, longitude: match.longitude)
        let around = reverse(point)
        var components = match.components
        if components.city == nil { components.city = around.city ?? around.place.flatMap { $0.distance ?? .infinity < 15_000 ? $0.name : nil } }
        // A Chinese street and its number are written together: 中关村南大街5号.
        let name = [match.street, match.housenumber].compactMap { $0 }.joined(separator: TextNormalizer.containsCJK(match.street) ? "" : " ")
        var display = [components.formatted]
        for part in [around.admin1, around.countryName].compactMap({ $0 }) where !part.isEmpty && !display.contains(part) { display.append(part) }
        return GeocodeResult(
            id: match.id,
            name: name,
            displayName: display.joined(separator: ", "),
            latitude: match.latitude,
            longitude: match.longitude,
            country: around.country ?? "",
            admin1: around.admin1 ?? "",
            admin2: around.admin2 ?? "",
            population: nil,
            type: match.kind.rawValue,
            score: (match.score * 1000).rounded() / 1000,
            adcode: nil,
            unresolved: match.unresolved,
            distance: near.map { GreatCircle.distance($0, point) },
            address: components,
            interpolation: match.interpolation
        )
    }
}

extension Gazetteer {
    /// The city and country of a point, for imported objects whose tags do not say: the large city it lies in, else
    /// the nearest place within 15 km; the country of `reverse`.
    public func cityAndCountry(latitude: Double, longitude: Double) -> (city: String?, country: String?) {
        let around = reverse(Coordinate(uncheckedLatitude: latitude, longitude: longitude))
        let city = around.city ?? around.place.flatMap { ($0.distance ?? .infinity) < 15_000 ? $0.name : nil }
        return (city, around.country)
    }
}
