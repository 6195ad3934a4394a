import GeoCore

extension Gazetteer {
    /// The nearest populated place to a point and the areas around it.
    ///
    /// Without boundary polygons, the country and admin areas are those of the nearest place, and in China the
    /// district is the one whose seat (cpca centroid) is nearest, within 150 km — an approximation that is right
    /// away from borders and says how far the seat is.
    public func reverse(_ point: Coordinate) -> ReverseResult {
        guard let nearest = placeTree.nearest(k: 1, latitude: point.latitude, longitude: point.longitude).first else {
            return ReverseResult(place: nil, country: nil, countryName: nil, admin1: nil, admin2: nil, division: nil)
        }
        let entity = Int32(nearest.id)
        let place = makeResult(entity, score: 1, language: .en, unresolved: nil, near: point)
        var division: ReverseResult.DivisionMatch?
        if ChinaDatum.isInChina(latitude: point.latitude, longitude: point.longitude),
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
        let p = places[Int(entity)]
        return ReverseResult(
            place: place,
            country: p.country,
            countryName: countries[p.country]?.name,
            admin1: p.admin1.isEmpty ? nil : p.admin1,
            admin2: p.admin2.isEmpty ? nil : p.admin2,
            division: division
        )
    }
}
