import GeoCore

extension Gazetteer {
    /// Within this distance of a populated place, the point is taken to be in that place's country and areas.
    public static let placeRadius = 25_000.0

    /// The nearest populated place to a point and the areas around it.
    ///
    /// Without boundary polygons for areas, the country and admin areas are those of the nearest place when it is
    /// within `placeRadius`. Farther out, the country outlines decide: inside one, its country (and the place's
    /// areas only if the place is in it); outside every outline — open sea — no country is claimed, and the nearest
    /// place is still given with its distance. `city` names the large city the point lies in (a suburb's city), by
    /// a radius that grows with population. In China the district is the one whose seat (cpca centroid) is
    /// nearest, within 150 km — an approximation that is right away from borders and says how far the seat is.
    public func reverse(_ point: Coordinate) -> ReverseResult {
        guard let nearest = placeTree.nearestOne(latitude: point.latitude, longitude: point.longitude) else {
            return ReverseResult(place: nil, country: nil, countryName: nil, admin1: nil, admin2: nil, city: nil, division: nil)
        }
        let entity = Int32(nearest.id)
        let place = makeResult(entity, score: 1, language: .en, unresolved: nil, near: point)
        let p = places[Int(entity)]
        let country: String?
        if nearest.distance <= Self.placeRadius {
            country = p.country
        } else {
            country = outlines?.country(at: point)
        }
        let sameCountry = country == p.country
        let division = country == "CN" || (country == nil && outlines == nil) ? district(at: point) : nil
        return ReverseResult(
            place: place,
            country: country,
            countryName: country.flatMap { countries[$0]?.name },
            admin1: sameCountry && !p.admin1.isEmpty ? p.admin1 : nil,
            admin2: sameCountry && !p.admin2.isEmpty ? p.admin2 : nil,
            city: country == nil ? nil : city(around: point, in: country!),
            division: division
        )
    }

    /// The Chinese district a point is in (its seat the nearest, within 150 km), for a point of China: `reverse`'s
    /// `division` without the rest of its answer (the AMap adapter asks it for every POI it writes).
    /// The country is the outlines' (a point-in-polygon test: cheaper than `reverse`'s nearest place, and the same
    /// but within a few kilometres of a border).
    public func division(at point: Coordinate) -> ReverseResult.DivisionMatch? {
        guard ChinaDatum.isInChina(latitude: point.latitude, longitude: point.longitude) else { return nil }
        if let outlines {
            guard outlines.country(at: point) == "CN" else { return nil }
        } else if let nearest = placeTree.nearestOne(latitude: point.latitude, longitude: point.longitude) {
            guard places[Int(nearest.id)].country == "CN" else { return nil }
        }
        return district(at: point)
    }

    /// The seat of the Chinese division with this adcode ("110108": 海淀区), as AMap's `city` parameters may name it.
    public func division(adcode: Int) -> Division? { divisionIndexByAdcode[adcode].map { divisions[$0] } }

    /// The district whose seat is nearest a point of China, within 150 km.
    func district(at point: Coordinate) -> ReverseResult.DivisionMatch? {
        guard ChinaDatum.isInChina(latitude: point.latitude, longitude: point.longitude),
            let seat = districtTree.nearestOne(latitude: point.latitude, longitude: point.longitude, maxDistance: 150_000)
        else { return nil }
        guard var match = divisionAreas[Int(seat.id)] else { return nil }
        match.distance = (seat.distance * 10).rounded() / 10
        return match
    }

    /// Radius of a city of `population` people, for "which city is this suburb in": 20 m × √population
    /// (Helsinki 660 000 → 16 km, Sydney 5.6 M → 47 km, a town of 100 000 → 6 km).
    static func cityRadius(population: Int) -> Double { 20 * Double(population).squareRoot() }

    /// The most populous city (100 000 people or more) of `country` whose radius covers the point.
    func city(around point: Coordinate, in country: String) -> String? {
        var best: (index: Int, population: Int)?
        for hit in placeTree.nearest(k: 64, latitude: point.latitude, longitude: point.longitude, maxDistance: 60_000) {
            let candidate = Int(hit.id)
            let population = places.population(candidate)
            guard population >= 100_000, hit.distance <= Self.cityRadius(population: population), places.isInCountry(candidate, country)
            else { continue }
            if population > best?.population ?? 0 { best = (candidate, population) }
        }
        return best.map { places.name($0.index) }
    }
}
