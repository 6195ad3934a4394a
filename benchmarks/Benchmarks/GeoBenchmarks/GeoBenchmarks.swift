import Benchmark
import BundledData
import Catalog
import GeoCore
import Gazetteer
import SpatialIndex

// Micro-benchmarks of the geodesy core and the spatial index on one thread. Each benchmark's scaling factor makes
// the reported figures per point or per query. Data: 1 M random points in China for the datum conversions, 1 M
// POIs from `poi generate --seed 42` for the index.

let pointCount = 1_000_000

let chinaPoints: [XY] = {
    var random = SplitMix64(seed: 42)
    return (0..<pointCount).map { _ in XY(x: random.uniform(74...134), y: random.uniform(18...53)) }
}()

let gcjPoints: [XY] = chinaPoints.map {
    let g = ChinaDatum.wgs84ToGCJ02(latitude: $0.y, longitude: $0.x)
    return XY(x: g.longitude, y: g.latitude)
}

let generated: [IndexedPoint] = {
    let places = (try? PlaceFile.loadPlaces(directory: DataDirectory.resolve())) ?? []
    precondition(!places.isEmpty, "run from the repository root so data/places.tsv.gz is found (or set POI_DATA_DIR)")
    var generator = SyntheticPOIGenerator(places: places, seed: 42)
    return (0..<pointCount).map { i in
        let r = generator.next()
        return IndexedPoint(id: UInt32(i), latitude: r.lat, longitude: r.lon)
    }
}()

let queries: [(latitude: Double, longitude: Double)] = {
    var random = SplitMix64(seed: 43)
    return (0..<100_000).map { _ in
        let p = generated[Int(random.next() % UInt64(generated.count))]
        let q = GreatCircle.destination(
            from: Coordinate(uncheckedLatitude: p.latitude, longitude: p.longitude),
            distance: random.uniform(0...500),
            bearing: random.uniform(0...360)
        )
        return (q.latitude, q.longitude)
    }
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(5), maxIterations: 50)

    Benchmark("convert wgs84→gcj02 (per point)", configuration: .init(scalingFactor: .mega)) { benchmark in
        var sink = 0.0
        for i in benchmark.scaledIterations {
            let p = chinaPoints[i % pointCount]
            sink += ChinaDatum.wgs84ToGCJ02(latitude: p.y, longitude: p.x).latitude
        }
        blackHole(sink)
    }

    Benchmark("convert gcj02→wgs84 iterative (per point)", configuration: .init(scalingFactor: .mega)) { benchmark in
        var sink = 0.0
        for i in benchmark.scaledIterations {
            let p = gcjPoints[i % pointCount]
            sink += ChinaDatum.gcj02ToWGS84(latitude: p.y, longitude: p.x).latitude
        }
        blackHole(sink)
    }

    Benchmark("convert wgs84→EPSG:3857 batch via PROJ (per point)", configuration: .init(scalingFactor: .mega)) { benchmark in
        for _ in 0..<(benchmark.scaledIterations.count / pointCount) {
            var points = chinaPoints
            try CoordinateConverter.shared.convert(&points, from: .wgs84, to: .epsg(3857))
            blackHole(points[0].x)
        }
    }

    Benchmark("index bulk build (1M points)", configuration: .init(maxIterations: 5)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(SpatialIndex(bulkLoading: generated).count) }
    }

    let index = SpatialIndex(bulkLoading: generated)

    Benchmark("kNN k=10 at 1M (per query)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for i in benchmark.scaledIterations {
            let q = queries[i % queries.count]
            blackHole(index.tree.nearest(k: 10, latitude: q.latitude, longitude: q.longitude).count)
        }
    }

    Benchmark("radius 1 km at 1M (per query)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for i in benchmark.scaledIterations {
            let q = queries[i % queries.count]
            blackHole(index.tree.within(radius: 1_000, latitude: q.latitude, longitude: q.longitude).count)
        }
    }

    Benchmark("clusters precision 5 over France at 1M (per query)", configuration: .init(scalingFactor: .one)) { benchmark in
        let france = BoundingBox(uncheckedWest: -5.2, south: 42.3, east: 8.3, north: 51.1)
        for _ in benchmark.scaledIterations { blackHole(try index.clusters(in: france, precision: 5).count) }
    }
}
