import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import GeoCore
import HTTPAPI
import Metrics
import Prometheus
import Records
import SearchEngine
import SpatialIndex
import Startup

/// One benchmark's settings, whichever `poi bench` subcommand gave them, and the harness that runs it and prints its
/// JSON line. Errors are `StartupError`s: `.usage` for what the caller asked wrongly, `.failure` for the rest.
public struct BenchRun {
    public enum Operation: String, Sendable {
        case knn, radius, bbox, keyword, geocode, autocomplete, wire
        case keywordNearby = "keyword-nearby"
    }

    public let op: Operation
    public var n: Int
    /// The generated records' seed, data directory and share placed in China (`poi generate`).
    public var seed: UInt64
    public var dataDir: String?
    public var chinaShare: Double?
    public var queries: Int
    public var queryFile: String?
    public var input: String?
    public var k = 10
    public var radius: Double = 1_000
    public var boxSize: Double = 600
    public var db: String?
    public var keywordFile: String?
    public var classes: String?
    /// With `classes`: timed passes over the queries, each query's least time kept.
    public var repeats = 1
    public var dumpQueries: String?
    public var slowest = 0
    public var paths: String?

    public init(op: Operation, n: Int, seed: UInt64, dataDir: String?, chinaShare: Double?, queries: Int, queryFile: String?) {
        (self.op, self.n, self.seed, self.dataDir, self.chinaShare) = (op, n, seed, dataDir, chinaShare)
        (self.queries, self.queryFile) = (queries, queryFile)
    }

    /// The records of `poi generate` with these settings.
    private func generator() throws -> SyntheticPOIGenerator {
        let places: [Place]
        do { places = try PlaceFile.loadPlaces(directory: DataDirectory.resolve(dataDir)) } catch let error as DataFileError {
            throw StartupError.failure("\(error.description) (set --data-dir or POI_DATA_DIR to the bundled data directory)")
        }
        return SyntheticPOIGenerator(places: places, seed: seed, chinaShare: chinaShare)
    }

    public func run() throws {
        if op == .keyword || op == .keywordNearby {
            try runKeyword()
            return
        }
        if op == .geocode || op == .autocomplete {
            try runGeocode()
            return
        }
        if op == .wire {
            try runWire()
            return
        }
        let points = try loadPoints()
        let origins = try loadOrigins(near: points)
        let clock = ContinuousClock()
        var index = SpatialIndex()
        let build = clock.measure { index = SpatialIndex(bulkLoading: points) }
        var results = 0
        let elapsed: Duration
        switch op {
        case .knn:
            elapsed = clock.measure {
                for o in origins { results &+= index.tree.nearest(k: k, latitude: o.latitude, longitude: o.longitude).count }
            }
        case .radius:
            elapsed = clock.measure {
                for o in origins { results &+= index.tree.within(radius: radius, latitude: o.latitude, longitude: o.longitude).count }
            }
        case .bbox:
            let boxes = origins.map { o -> BoundingBox in
                let half = boxSize / 2 / GreatCircle.earthRadius * 180 / .pi
                let lonHalf = min(180, half / max(0.01, cos(o.latitude * .pi / 180)))
                return BoundingBox(
                    uncheckedWest: Coordinate.wrapLongitude(o.longitude - lonHalf),
                    south: max(-90, o.latitude - half),
                    east: Coordinate.wrapLongitude(o.longitude + lonHalf),
                    north: min(90, o.latitude + half)
                )
            }
            elapsed = clock.measure {
                for box in boxes {
                    index.tree.search(box) { _, _, _ in
                        results &+= 1
                        return true
                    }
                }
            }
        case .keyword, .keywordNearby, .geocode, .autocomplete, .wire:
            return
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let buildSeconds = Double(build.components.seconds) + Double(build.components.attoseconds) * 1e-18
        let line = BenchLine(
            op: op.rawValue,
            n: points.count,
            queries: origins.count,
            k: k,
            buildSeconds: (buildSeconds * 1e6).rounded() / 1e6,
            seconds: (seconds * 1e6).rounded() / 1e6,
            qps: (Double(origins.count) / seconds).rounded(),
            usPerQuery: (seconds / Double(origins.count) * 1e6 * 1000).rounded() / 1000,
            meanResults: (Double(results) / Double(origins.count) * 100).rounded() / 100,
            indexBytesPerPoint: (Double(index.memoryFootprint) / Double(points.count) * 10).rounded() / 10
        )
        print(line.text)
    }

    /// Geocoding latency: load time, then each query timed alone for p50/p99.
    private func runGeocode() throws {
        let clock = ContinuousClock()
        var gazetteer: Gazetteer?
        var addresses = AddressBook.empty
        let load = try clock.measure {
            gazetteer = try? keepUntilExit(DataSources(dataDir: dataDir).loadGazetteer(snapshot: .noSnapshot).gazetteer)
            // With --db, the database's imported addresses and streets are searched too (house-level geocoding).
            if let db { addresses = try DataSources(db: db, dataDir: dataDir).loadAddresses() }
        }
        guard let gazetteer else { throw StartupError.failure("cannot load the gazetteer from \(DataDirectory.resolve(dataDir))") }
        var texts: [String]
        if let queryFile {
            guard let content = try? String(contentsOfFile: queryFile, encoding: .utf8) else { throw StartupError.usage("cannot read \(queryFile)") }
            texts = content.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        } else {
            // Prefixes (3 to 6 letters) of populous places' names, as an autocomplete box sees them.
            var random = SplitMix64(seed: seed)
            let big = gazetteer.places.filter { $0.population >= 50_000 }
            texts = (0..<min(queries, 10_000)).map { _ in
                let name = big[Int(random.next() % UInt64(big.count))].name
                return String(name.prefix(3 + Int(random.next() % 4)))
            }
        }
        guard !texts.isEmpty else { throw StartupError.usage("no queries") }
        let parsed = try texts.map { text -> GeocodeQuery in
            do { return try GeocodeQuery(text: text, limit: op == .autocomplete ? 5 : 10) } catch let error as GazetteerError {
                throw StartupError.usage("\(text): \(error.description)")
            }
        }
        let geocoder = Geocoder(gazetteer: gazetteer, addresses: addresses)
        var samples: [Double] = []
        var results = 0
        let rounds = max(1, min(20, 2_000 / parsed.count))
        for _ in 0..<rounds {
            for query in parsed {
                let start = clock.now
                results &+= geocoder.places(query).count
                samples.append(Double((clock.now - start).components.attoseconds) * 1e-12 + Double((clock.now - start).components.seconds) * 1e6)
            }
        }
        printLatencies(samples, n: gazetteer.count, k: nil, load: seconds(load), results: results)
    }

    /// Keyword search (op keyword: GET /v1/search, limit 20) or keyword + nearby (op keyword-nearby: the 10 nearest
    /// matches within 5 km), over the engine loaded from --db or built from generated records.
    private func runKeyword() throws {
        let clock = ContinuousClock()
        var engine: SearchEngine?
        var records: [POIRecord] = []
        let start = clock.now
        if let db {
            do {
                engine = try SearchEngine(
                    store: try CatalogStore(path: db),
                    taxonomy: try CategoryTaxonomy.load(directory: DataDirectory.resolve(dataDir))
                )
            } catch { throw StartupError.failure("\(error)") }
        } else {
            var generator = try generator()
            records = (0..<n).map { _ in generator.next() }
            engine = SearchEngine(pois: records, taxonomy: try CategoryTaxonomy.load(directory: DataDirectory.resolve(dataDir)))
        }
        let load = clock.now - start
        guard let engine else { return }
        keepUntilExit(engine)
        if let classes {
            try runKeywordClasses(engine, file: classes, load: seconds(load))
            return
        }
        let origins = try loadOrigins(near: engine.samplePositions(count: 50_000, seed: seed))
        var random = SplitMix64(seed: seed &+ 2)
        let keywords: [String]
        if let keywordFile {
            guard let content = try? String(contentsOfFile: keywordFile, encoding: .utf8) else {
                throw StartupError.usage("cannot read \(keywordFile)")
            }
            keywords = content.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        } else {
            keywords = engine.sampleNameWords(count: 1_000, seed: seed)
        }
        guard !keywords.isEmpty else { throw StartupError.usage("no keywords") }
        let count = min(queries, 20_000)
        var samples: [Double] = []
        var results = 0
        var dump: [UInt8] = []
        var slow: [(Double, String)] = []
        for i in 0..<count {
            let keyword = keywords[Int(random.next() % UInt64(keywords.count))]
            let o = origins[i % origins.count]
            if dumpQueries != nil {
                dump += try JSONEncoder().encode(DumpedQuery(q: keyword, lat: o.latitude, lon: o.longitude)) + [0x0A]
            }
            let origin = Coordinate(uncheckedLatitude: o.latitude, longitude: o.longitude)
            let t0 = clock.now
            do {
                if op == .keyword {
                    results &+= try engine.search(SearchQuery(text: keyword, limit: 20)).results.count
                } else {
                    results &+= engine.nearby(NearbyQuery(Around(origin, radius: 5_000), text: keyword, limit: 10)).results.count
                }
            } catch { throw StartupError.failure("\(keyword): \(error)") }
            samples.append(seconds(clock.now - t0) * 1e6)
            if slowest > 0 { slow.append((samples[samples.count - 1], keyword)) }
        }
        for (micros, keyword) in slow.sorted(by: { $0.0 > $1.0 }).prefix(slowest) {
            FileHandle.standardError.write(Data("slow: \((micros * 10).rounded() / 10) us  \(keyword)\n".utf8))
        }
        if let dumpQueries, !FileManager.default.createFile(atPath: dumpQueries, contents: Data(dump)) {
            throw StartupError.failure("cannot write \(dumpQueries)")
        }
        printLatencies(samples, n: engine.counts.pois, k: op == .keyword ? 20 : 10, load: seconds(load), results: results)
    }

    /// One query of a class file.
    struct ClassQuery: Decodable {
        let `class`: String
        let q: String
        let origin: Bool
        let lat: Double
        let lon: Double
        /// The record the query was drawn from, when it is wanted near the top (pinyin classes).
        let id: String?
    }

    /// Each query of the class file once (after one warm-up pass over all of them), top 20 as GET /v1/search; one
    /// JSON line per class and origin, in the file's order, with `class` and `origin` added — and, for a class whose
    /// queries name the record they were drawn from, `top3`: the share of them with that record among the first three.
    private func runKeywordClasses(_ engine: SearchEngine, file: String, load: Double) throws {
        guard let content = FileManager.default.contents(atPath: file) else { throw StartupError.usage("cannot read \(file)") }
        let decoder = JSONDecoder()
        let queries = try content.split(separator: 0x0A).filter { !$0.isEmpty }.map { line in
            do { return try decoder.decode(ClassQuery.self, from: Data(line)) } catch { throw StartupError.usage("\(file): \(error)") }
        }
        func query(_ q: ClassQuery) -> SearchQuery {
            SearchQuery(text: q.q, origin: q.origin ? Coordinate(uncheckedLatitude: q.lat, longitude: q.lon) : nil, limit: 20)
        }
        // The warm-up pass also notes whether each query's wanted record is in its first three.
        let inTop3 = queries.map { q -> Bool? in
            let ids = ((try? engine.search(query(q)).results.prefix(3)) ?? []).map { hit -> String in
                switch hit.record {
                case .poi(let poi): return poi.id
                case .pin(let pin): return pin.id
                }
            }
            return q.id.map { ids.contains($0) }
        }
        // Each query's least time over the passes (one pass: its time).
        let clock = ContinuousClock()
        var least = [Double](repeating: .infinity, count: queries.count)
        var found = [Int](repeating: 0, count: queries.count)
        for _ in 0..<repeats {
            for (i, q) in queries.enumerated() {
                let t0 = clock.now
                found[i] = (try? engine.search(query(q)).results.count) ?? 0
                least[i] = min(least[i], seconds(clock.now - t0) * 1e6)
            }
        }
        var groups: [(key: String, origin: Bool, samples: [Double], results: Int, judged: Int, top3: Int)] = []
        var slow: [(Double, String)] = []
        for (i, q) in queries.enumerated() {
            if groups.last.map({ $0.key != q.class || $0.origin != q.origin }) ?? true { groups.append((q.class, q.origin, [], 0, 0, 0)) }
            groups[groups.count - 1].samples.append(least[i])
            groups[groups.count - 1].results += found[i]
            if let hit = inTop3[i] {
                groups[groups.count - 1].judged += 1
                if hit { groups[groups.count - 1].top3 += 1 }
            }
            if slowest > 0 { slow.append((least[i], "\(q.class)\(q.origin ? " @" : ""): \(q.q)")) }
        }
        for (micros, text) in slow.sorted(by: { $0.0 > $1.0 }).prefix(slowest) {
            FileHandle.standardError.write(Data("slow: \((micros * 10).rounded() / 10) us  \(text)\n".utf8))
        }
        for group in groups {
            let line = latencyLine(group.samples, n: engine.counts.pois, k: 20, load: load, results: group.results)
            // The class and origin go first, for reading.
            let top3 = group.judged > 0 ? "\"top3\":\(Double(group.top3 * 10_000 / group.judged) / 10_000)," : ""
            print("{\"class\":\"\(group.key)\",\"origin\":\(group.origin)," + top3 + line.dropFirst())
        }
    }

    /// A read request's user-space cost in the server: each target of --paths sent as a GET through the fast lane
    /// (request parsing, parameters, the engine, encoding, response bytes, request metrics), on one thread, over the
    /// database's indexes as `poi serve` opens them. `mean_results` is the mean response size in bytes.
    private func runWire() throws {
        guard let db, let paths else { throw StartupError.usage("bench wire needs --db and --paths") }
        guard let content = try? String(contentsOfFile: paths, encoding: .utf8) else { throw StartupError.usage("cannot read \(paths)") }
        let targets = content.utf8.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard !targets.isEmpty else { throw StartupError.usage("\(paths) holds no request targets") }
        let clock = ContinuousClock()
        let start = clock.now
        let sources = DataSources(db: db, dataDir: dataDir)
        let engine = keepUntilExit(try sources.openEngine(snapshot: .now))
        let gazetteer = keepUntilExit(try sources.loadGazetteer().gazetteer)
        let load = clock.now - start
        // Metrics as poi serve keeps them: every request is counted and timed.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: DataDirectory.resolve(dataDir))
        let wire = WireBench(configuration: configuration, engine: engine, gazetteer: gazetteer, metrics: registry)
        for target in targets.prefix(1_000) {
            guard wire.respond(to: target) != nil else { throw StartupError.usage("the fast lane does not take GET \(target)") }
        }
        var samples: [Double] = []
        samples.reserveCapacity(queries)
        var bytes = 0
        for i in 0..<queries {
            let target = targets[i % targets.count]
            let t0 = clock.now
            let response = wire.respond(to: target)
            samples.append(seconds(clock.now - t0) * 1e6)
            bytes &+= response?.readableBytes ?? 0
        }
        printLatencies(samples, n: engine.counts.pois, k: nil, load: seconds(load), results: bytes)
    }

    /// The JSON line of a per-query-timed benchmark: totals plus p50/p99 in microseconds.
    private func printLatencies(_ unsorted: [Double], n: Int, k: Int?, load: Double, results: Int) {
        print(latencyLine(unsorted, n: n, k: k, load: load, results: results))
    }

    /// The JSON line of `printLatencies`.
    private func latencyLine(_ unsorted: [Double], n: Int, k: Int?, load: Double, results: Int) -> String {
        let samples = unsorted.sorted()
        let total = samples.reduce(0, +)
        return BenchLine(
            op: op.rawValue,
            n: n,
            queries: samples.count,
            k: k,
            buildSeconds: (load * 1e3).rounded() / 1e3,
            seconds: (total / 1e6 * 1e6).rounded() / 1e6,
            qps: (Double(samples.count) / (total / 1e6)).rounded(),
            usPerQuery: (total / Double(samples.count) * 10).rounded() / 10,
            p50Us: (samples[samples.count / 2] * 10).rounded() / 10,
            p99Us: (samples[min(samples.count - 1, samples.count * 99 / 100)] * 10).rounded() / 10,
            meanResults: (Double(results) / Double(samples.count) * 100).rounded() / 100
        ).text
    }

    private func loadPoints() throws -> [IndexedPoint] {
        if let input {
            var points: [IndexedPoint] = []
            try readJSONLines(input) { object, line in
                guard let lat = object["lat"] as? Double, let lon = object["lon"] as? Double,
                    (-90.0...90.0).contains(lat), (-180.0...180.0).contains(lon)
                else { throw StartupError.usage("\(input):\(line): a record needs lat and lon in range") }
                points.append(IndexedPoint(id: UInt32(points.count), latitude: lat, longitude: lon))
            }
            guard !points.isEmpty else { throw StartupError.usage("\(input): no records") }
            return points
        }
        var generator = try generator()
        return (0..<n).map { i in
            let record = generator.next()
            return IndexedPoint(id: UInt32(i), latitude: record.lat, longitude: record.lon)
        }
    }

    /// Query origins: from the file, or records of the data set jittered by up to ~500 m.
    private func loadOrigins(near points: [IndexedPoint]) throws -> [(latitude: Double, longitude: Double)] {
        if let queryFile {
            var origins: [(latitude: Double, longitude: Double)] = []
            try readJSONLines(queryFile) { object, line in
                guard let lat = object["lat"] as? Double, let lon = object["lon"] as? Double,
                    (-90.0...90.0).contains(lat), (-180.0...180.0).contains(lon)
                else { throw StartupError.usage("\(queryFile):\(line): a query needs lat and lon in range") }
                origins.append((lat, lon))
            }
            guard !origins.isEmpty else { throw StartupError.usage("\(queryFile): no queries") }
            return origins
        }
        var random = SplitMix64(seed: seed &+ 1)
        return (0..<queries).map { _ in
            let p = points[Int(random.next() % UInt64(points.count))]
            let jitter = GreatCircle.destination(
                from: Coordinate(uncheckedLatitude: p.latitude, longitude: p.longitude),
                distance: random.uniform(0...500),
                bearing: random.uniform(0...360)
            )
            return (jitter.latitude, jitter.longitude)
        }
    }

    private func readJSONLines(_ path: String, _ body: ([String: Any], Int) throws -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StartupError.usage("cannot open \(path)") }
        let data = handle.readDataToEndOfFile()
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw StartupError.usage("\(path):\(lineNumber): not a JSON object")
            }
            try body(object, lineNumber)
        }
    }
}

/// One line of `poi bench`'s output (keys in snake case, as benchmarks/run reads them).
struct BenchLine: Encodable {
    var op: String
    var n: Int
    var queries: Int
    var k: Int?
    var buildSeconds: Double
    var seconds: Double
    var qps: Double
    var usPerQuery: Double
    var p50Us: Double? = nil
    var p99Us: Double? = nil
    var meanResults: Double
    var indexBytesPerPoint: Double? = nil

    var text: String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

/// A keyword query as `--dump-queries` writes it, for peers to replay.
struct DumpedQuery: Encodable {
    let q: String
    let lat: Double
    let lon: Double
}

/// A duration in seconds.
public func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
