/// One answer of forward or reverse geocoding (the `/v1/geocode` result shape).
public struct GeocodeResult: Sendable, Equatable {
    /// `geonames:<id>` or `adcode:<code>`.
    public let id: String
    public let name: String
    public let displayName: String
    public let latitude: Double
    public let longitude: Double
    public let country: String
    public let admin1: String
    public let admin2: String
    public let population: Int?
    /// city, province, prefecture, district.
    public let type: String
    public let score: Double
    /// Chinese administrative code for divisions.
    public let adcode: String?
    /// Trailing text of a Chinese address that names no division (street, number).
    public let unresolved: String?
    /// Metres from the request's origin, when there is one.
    public let distance: Double?
    /// Street, house number, postcode and city of a `house` or `street` answer.
    public let address: AddressComponents?
    /// How a `street` answer for a house number the data lacks was placed: `line` (an `addr:interpolation` line) or
    /// `neighbours` (between the nearest lower and higher numbers of the street); nil when it is the street's own point.
    public let interpolation: String?
    /// The text (its first part) is one of this place's names, in any language or script, not a prefix or a typo of
    /// one: what "named as typed" means to every surface, whatever language the answer's `name` is in.
    public internal(set) var namedAsTyped = false

    public init(
        id: String,
        name: String,
        displayName: String,
        latitude: Double,
        longitude: Double,
        country: String,
        admin1: String,
        admin2: String,
        population: Int?,
        type: String,
        score: Double,
        adcode: String?,
        unresolved: String?,
        distance: Double?,
        address: AddressComponents? = nil,
        interpolation: String? = nil
    ) {
        self.id = id
        self.name = name
        self.displayName = displayName
        self.latitude = latitude
        self.longitude = longitude
        self.country = country
        self.admin1 = admin1
        self.admin2 = admin2
        self.population = population
        self.type = type
        self.score = score
        self.adcode = adcode
        self.unresolved = unresolved
        self.distance = distance
        self.address = address
        self.interpolation = interpolation
    }
}

/// The parts of a street address.
public struct AddressComponents: Sendable, Equatable {
    public var street: String?
    public var housenumber: String?
    public var unit: String?
    public var postcode: String?
    public var city: String?

    public init(street: String?, housenumber: String? = nil, unit: String? = nil, postcode: String? = nil, city: String? = nil) {
        self.street = street
        self.housenumber = housenumber
        self.unit = unit
        self.postcode = postcode
        self.city = city
    }

    /// "Street 13, 00100 City" (parts that are missing are left out).
    public var formatted: String {
        let first = [street, housenumber].compactMap { $0 }.joined(separator: " ")
        let second = [postcode, city].compactMap { $0 }.joined(separator: " ")
        return [first, second].filter { !$0.isEmpty }.joined(separator: ", ")
    }
}

/// The answer of reverse geocoding: the nearest populated place and the administrative areas around the point.
public struct ReverseResult: Sendable, Equatable {
    public let place: GeocodeResult?
    public let country: String?
    public let countryName: String?
    public let admin1: String?
    public let admin2: String?
    /// The large city the point lies in (the city of a suburb), when there is one.
    public let city: String?
    /// In China: the county-level district whose seat is nearest, with its city and province.
    public let division: DivisionMatch?
    /// The nearest house within `AddressIndex.houseRadius`, else the nearest street within `streetRadius`, with
    /// its distance; nil when the imported data has neither near the point.
    public var address: GeocodeResult?

    public init(
        place: GeocodeResult?,
        country: String?,
        countryName: String?,
        admin1: String?,
        admin2: String?,
        city: String? = nil,
        division: DivisionMatch?,
        address: GeocodeResult? = nil
    ) {
        self.address = address
        self.place = place
        self.country = country
        self.countryName = countryName
        self.admin1 = admin1
        self.admin2 = admin2
        self.city = city
        self.division = division
    }

    public struct DivisionMatch: Sendable, Equatable {
        public let adcode: String
        public let province: String
        public let city: String?
        public let district: String?
        /// The names from the province down, each once, as a Chinese address writes them: 北京市海淀区.
        public let label: String
        /// Metres to the district's seat.
        public internal(set) var distance: Double

        /// The match of the last division of `chain` (its ancestors first), at distance 0.
        init(chain: [Division]) {
            let named = chain.filter { !$0.isPlaceholder }
            adcode = String(chain[chain.count - 1].adcode)
            province = named.first { $0.level == .province }?.name ?? ""
            city = named.first { $0.level == .city }?.name
            district = named.first { $0.level == .district }?.name
            label = named.map(\.name).reduce(into: [String]()) { names, name in
                if names.last != name { names.append(name) }
            }.joined()
            distance = 0
        }
    }
}
