import BundledData

/// Reads the bundled gazetteer files written by data/prepare.py.
public enum PlaceFile {
    public static let placesFile = "places.tsv.gz"

    /// The GeoNames places of `places.tsv.gz` in `directory`.
    /// - Throws: `DataFileError` when the file is missing or unreadable, `PlaceFileError` on a malformed row.
    public static func loadPlaces(directory: String) throws -> [Place] {
        var places: [Place] = []
        places.reserveCapacity(170_000)
        var lineNumber = 1
        try GzipFile.forEachLine(directory + "/" + placesFile) { line in
            lineNumber += 1
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 11, let id = Int(f[0]), let lat = Double(f[4]), let lon = Double(f[5]), let population = Int(f[9]) else {
                throw PlaceFileError.malformed(file: placesFile, line: lineNumber)
            }
            places.append(
                Place(
                    id: id,
                    name: String(f[1]),
                    asciiName: String(f[2]),
                    alternateNames: f[3].isEmpty ? [] : f[3].split(separator: "|").map(String.init),
                    latitude: lat,
                    longitude: lon,
                    country: String(f[6]),
                    admin1: String(f[7]),
                    admin2: String(f[8]),
                    population: population,
                    kind: .city
                )
            )
        }
        return places
    }
}

public enum PlaceFileError: Error, CustomStringConvertible {
    case malformed(file: String, line: Int)

    public var description: String {
        switch self {
        case .malformed(let file, let line): return "\(file):\(line): malformed row"
        }
    }
}
