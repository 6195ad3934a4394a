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
        guard let nearest = placeTree.nearest(k: 1, latitude: point.latitude, longitude: point.longitude).first else {
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
        var division: ReverseResult.DivisionMatch?
        if country == "CN" || (country == nil && outlines == nil),
            ChinaDatum.isInChina(latitude: point.latitude, longitude: point.longitude),
            let seat = districtTree.nearest(k: 1, latitude: point.latitude, longitude: point.longitude, maxDistance: 150_000).first
        {
            let chain = divisionChain(divisions[Int(seat.id)])
            division = ReverseResult.DivisionMatch(
                adcode: String(divisions[Int(seat.id)].adcode),
                province: chain.first { $0.level == .province }?.name ?? "",
                city: chain.first { $0.level == .city && !$0.isPlaceholder }?.name,
                district: chain.first { $0.level == .district }?.name,
                distance: (seat.distance * 10).rounded() / 10
            )
        }
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
