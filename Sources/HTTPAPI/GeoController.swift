import API
import BundledData
import Foundation
import Gazetteer
import GeoCore
import HTTPServer
import Hummingbird
import SearchEngine

/// geocode, suggest, reverse, convert.
struct GeoController {
    /// The process's one geocoder (nil: no gazetteer is loaded, and geocode, suggest and reverse answer 503).
    let geocoder: Geocoder?
    /// Its address book answers streets.
    let engine: SearchEngine
    let maximumBodySize: Int

    func register(on routes: RouteRegistrar) {
        routes.read("geocode", cost: .heavy) { input in try geocode(input) }
        routes.read("suggest", cost: .heavy) { input in try suggest(input) }
        routes.read("reverse", cost: .heavy) { input in try reverse(input) }
        routes.read("streets", cost: .heavy) { input in try streets(input) }
        routes.read("convert") { input in try convert(input) }
        routes.on("convertBatch") { request, _ in try await convertBatch(request) }
    }

    private func requireGeocoder() throws(Problem) -> Geocoder {
        guard let geocoder else { throw Problem(.serviceUnavailable, "the gazetteer is not loaded on this server") }
        return geocoder
    }

    func geocode(_ input: ReadInput) throws -> ReadAnswer {
        let parsed = try GeocodeRequest(input.parameters)
        return .json(parsed.encode(try requireGeocoder().places(parsed.query)))
    }

    func suggest(_ input: ReadInput) throws -> ReadAnswer {
        let parsed = try SuggestRequest(input.parameters)
        return .json(parsed.encode(try requireGeocoder().suggest(parsed.query)))
    }

    func reverse(_ input: ReadInput) throws -> ReadAnswer {
        let parsed = try ReverseRequest(input.parameters)
        return .json(parsed.encode(try requireGeocoder().areas(around: parsed.point)))
    }

    func streets(_ input: ReadInput) throws -> ReadAnswer {
        let parsed = try StreetsRequest(input.parameters)
        return .json(parsed.encode(engine.addresses.lines(in: parsed.box, limit: parsed.limit)))
    }

    func convert(_ input: ReadInput) throws -> ReadAnswer {
        let parsed = try ConvertRequest(input.parameters)
        return .json(parsed.encode(try convertPoints([parsed.point], from: parsed.from, to: parsed.to)[0]))
    }

    func convertBatch(_ request: Request) async throws -> Response {
        let body = try ConvertBody(try await request.body.collect(upTo: maximumBodySize).readableBytesView)
        return JSONResponse.body(body.encode(try convertPoints(body.points, from: body.from, to: body.to)))
    }

    private func convertPoints(_ points: [XY], from: CRS, to: CRS) throws -> [XY] {
        var points = points
        do {
            try CoordinateConverter.shared.convert(&points, from: from, to: to)
        } catch {
            if case .invalidPoint(let index, let reason) = error {
                throw Problem.badRequest(points.count == 1 ? reason : "points[\(index)]: \(reason)")
            }
            throw Problem.badRequest(error.description)
        }
        return points
    }
}
