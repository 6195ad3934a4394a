import API
import ArgumentParser
import BundledData
import Foundation
import Gazetteer
import GeoCore
import Records
import SearchEngine
import Startup

/// Output format of query commands.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

struct GeocodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "geocode", abstract: "Find places matching an address or place name, best first.")

    @Argument(help: "The address or place name, e.g. \"Springfield, IL\" or 北京市海淀区.") var text: String
    @Option(help: "Number of results (1 to 100).") var limit: Int = 10
    @Option(help: "Only places in this country (ISO 3166-1 alpha-2).") var country: String?
    @Option(help: "Language of names: en or zh.") var lang: String?
    @Option(help: "Favour places near this point: LAT,LON.") var near: String?
    @OptionGroup var sources: GazetteerOptions

    /// The request's parameters, the same whether sent to a server or parsed here.
    func parameters() throws -> QueryItems {
        let origin = try near.map { try parseLatLon($0, option: "--near") }
        return [
            ("q", text), ("limit", String(limit)), ("country", country), ("lang", lang),
            ("lat", origin.map { String($0.latitude) }), ("lon", origin.map { String($0.longitude) }),
        ]
    }

    func run() throws {
        let parameters = try parameters()
        let options = ["q": "the text", "lat": "--near", "lon": "--near"]
        let bytes: [UInt8]
        if let server = sources.server {
            bytes = try ServerClient.get(server, "/v1/geocode", parameters)
        } else {
            let request = try validated(options: options) { () throws(ParameterError) in try GeocodeRequest(RequestParameters(parameters)) }
            bytes = request.encode(try sources.geocoder().places(request.query))
        }
        guard sources.format == .table else { return print(String(decoding: bytes, as: UTF8.self)) }
        let results = try Answers.decode(Answers.Places.self, bytes).results
        if results.isEmpty { throw CLIError.failure("no place matches \"\(text)\"") }
        print(
            Table.render(
                header: ["name", "display name", "lat", "lon", "type", "population", "score"],
                rows: results.map { r -> [String] in
                    let shown: String = (r.displayName ?? "") + (r.unresolved.map { " [+\($0)]" } ?? "")
                    let population: String = r.population.map { String($0) } ?? ""
                    return [
                        r.name ?? "", shown, String(format: "%.5f", r.lat), String(format: "%.5f", r.lon), r.type ?? "", population,
                        String(r.score ?? 0),
                    ]
                }
            )
        )
    }
}

struct ReverseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reverse", abstract: "The nearest place to a point and the areas around it.")

    @Option(help: "Latitude (WGS-84).") var lat: Double
    @Option(help: "Longitude (WGS-84).") var lon: Double
    @OptionGroup var sources: GazetteerOptions

    func run() throws {
        let parameters: QueryItems = [("lat", String(lat)), ("lon", String(lon))]
        if let server = sources.server {
            let bytes = try ServerClient.get(server, "/v1/reverse", parameters)
            return print(String(decoding: bytes, as: UTF8.self))
        }
        let request = try validated { () throws(ParameterError) in try ReverseRequest(RequestParameters(parameters)) }
        let result = try sources.geocoder().areas(around: request.point)
        switch sources.format {
        case .json:
            print(String(decoding: request.encode(result), as: UTF8.self))
        case .table:
            guard let place = result.place else { throw CLIError.failure("no place found") }
            let distance = place.distance ?? 0
            var rows: [[String]] = []
            if let address = result.address {
                rows.append([address.type == "house" ? "address" : "street", address.displayName])
                rows.append(["address distance", String(format: "%.0f m", address.distance ?? 0)])
            }
            rows += [
                ["nearest place", place.displayName],
                ["distance", distance >= 10_000 ? String(format: "%.1f km", distance / 1_000) : String(format: "%.0f m", distance)],
                [
                    "country",
                    result.country == nil
                        ? "none claimed: in no country's outline and \(Int(distance / 1_000)) km from the nearest place"
                        : [result.countryName, result.country.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "),
                ],
                ["admin1", result.admin1 ?? ""],
                ["admin2", result.admin2 ?? ""],
                ["city", result.city ?? ""],
            ]
            if let d = result.division {
                rows.append(["division", [d.province, d.city, d.district].compactMap { $0 }.joined(separator: " ") + " (\(d.adcode))"])
                rows.append(["district seat", String(format: "%.0f m", d.distance)])
            }
            print(Table.render(header: ["", ""], rows: rows))
        }
    }
}

/// Where `poi geocode` and `poi reverse` find places and addresses, and how they print.
struct GazetteerOptions: ParsableArguments {
    @Option(help: "table or json (exactly what the HTTP API answers).") var format: OutputFormat = .table
    @Option(help: "Directory of the bundled data (default: data/, or POI_DATA_DIR).") var dataDir: String?
    @Option(help: "Database whose imported addresses and streets to search (default: var/poi.sqlite, created from the bundled data on first use).")
    var db: String?

    @Option(help: "Ask a running poi server instead of loading the gazetteer.") var server: String?

    var sources: DataSources { DataSources(db: db, dataDir: dataDir).showingProgress() }

    /// Through the snapshot this user's databases share: the first command builds the gazetteer and writes it, the
    /// next map it.
    func gazetteer() throws -> Gazetteer {
        keepUntilExit(try startup { () throws(StartupError) in try sources.loadGazetteer(snapshot: .shared).gazetteer })
    }

    func addresses() throws -> AddressBook { keepUntilExit(try startup { () throws(StartupError) in try sources.loadAddresses() }) }

    /// The geocoder `poi serve` asks, without POIs: the gazetteer's places and the database's houses and streets.
    func geocoder() throws -> Geocoder { Geocoder(gazetteer: try gazetteer(), addresses: try addresses()) }
}

/// Parses "LAT,LON" for an option, as a usage error naming the option when malformed.
func parseLatLon(_ text: String, option: String) throws -> Coordinate {
    let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    guard parts.count == 2, let lat = DecimalNumber.parse(parts[0]), let lon = DecimalNumber.parse(parts[1]) else {
        throw CLIError.usage("\(option) must be LAT,LON (two numbers)")
    }
    do { return try Coordinate(latitude: lat, longitude: lon) } catch { throw CLIError.usage("\(option): \(error.description)") }
}
