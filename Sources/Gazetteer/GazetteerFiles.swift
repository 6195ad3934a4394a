import BundledData

/// Reads the bundled gazetteer files other than places (see `PlaceFile`).
enum GazetteerFiles {
    static func loadDivisions(directory: String) throws -> [Division] {
        var divisions: [Division] = []
        var line = 1
        try GzipFile.forEachLine(directory + "/china_divisions.tsv.gz") { row in
            line += 1
            let f = row.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 8, let adcode = Int(f[0]), let level = Division.Level(rawValue: String(f[4])),
                let lat = Double(f[6]), let lon = Double(f[7])
            else { throw PlaceFileError.malformed(file: "china_divisions.tsv.gz", line: line) }
            divisions.append(
                Division(
                    adcode: adcode,
                    name: String(f[1]),
                    shortName: String(f[2]),
                    pinyin: String(f[3]),
                    level: level,
                    parent: Int(f[5]),
                    latitude: lat,
                    longitude: lon
                )
            )
        }
        return divisions
    }

    static func loadCountries(directory: String) throws -> [Country] {
        var countries: [Country] = []
        try GzipFile.forEachLine(directory + "/countries.tsv.gz") { row in
            let f = row.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count >= 3 else { return }
            countries.append(Country(code: String(f[0]), name: String(f[1]), capital: String(f[2])))
        }
        return countries
    }

    /// (country, admin1 name, short code such as "IL").
    static func loadAdmin1(directory: String) throws -> [(country: String, name: String, code: String)] {
        var rows: [(String, String, String)] = []
        try GzipFile.forEachLine(directory + "/admin1.tsv.gz") { row in
            let f = row.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 3 else { return }
            rows.append((String(f[0]), String(f[1]), String(f[2])))
        }
        return rows
    }
}
