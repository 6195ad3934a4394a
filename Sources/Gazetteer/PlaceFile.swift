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
        try GzipFile.forEachRow(directory + "/" + placesFile) { f in
            lineNumber += 1
            guard f.count == 11, let id = Int(ascii: f[0]), let lat = Double(ascii: f[4]), let lon = Double(ascii: f[5]),
                let population = Int(ascii: f[9])
            else {
                throw PlaceFileError.malformed(file: placesFile, line: lineNumber)
            }
            places.append(
                Place(
                    id: id,
                    name: String(decoding: f[1], as: UTF8.self),
                    asciiName: String(decoding: f[2], as: UTF8.self),
                    alternateNames: f[3].isEmpty ? [] : f[3].split(separator: UInt8(ascii: "|")).map { String(decoding: $0, as: UTF8.self) },
                    latitude: lat,
                    longitude: lon,
                    country: String(decoding: f[6], as: UTF8.self),
                    admin1: String(decoding: f[7], as: UTF8.self),
                    admin2: String(decoding: f[8], as: UTF8.self),
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

extension Int {
    /// Parses decimal digits (with an optional minus) from UTF-8 bytes.
    init?(ascii bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        var negative = false
        for (i, byte) in bytes.enumerated() {
            if i == 0 && byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value &* 10 &+ Int(byte - 48)
        }
        self = negative ? -value : value
    }
}

extension Double {
    init?(ascii bytes: ArraySlice<UInt8>) {
        guard let value = Double(String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = value
    }
}
