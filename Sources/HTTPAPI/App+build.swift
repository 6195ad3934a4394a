import API
import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import HTTPServer
import Hummingbird
import HummingbirdCore
import Logging
import NIOSSL
import Prometheus
import Records
import SearchEngine
import ServiceLifecycle

/// The one place that builds the HTTP application: `poi serve` and the tests both call it.
///
/// `metrics` is the Prometheus registry behind swift-metrics (bootstrapped once per process by the caller); when
/// given, every request is counted and timed per route and status, and `/metrics` serves the registry.
public func buildApplication(
    configuration: ServerConfiguration,
    engine: SearchEngine,
    gazetteer: Gazetteer?,
    metrics: PrometheusCollectorRegistry? = nil,
    logger: Logger = Logger(label: "poi"),
    tls: NIOSSLContext? = nil,
    services: [any Service] = [],
    onServerRunning: @escaping @Sendable (_ address: String) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let endpointMetrics = metrics.map { _ in EndpointMetrics() }
    let work = ServerWork()
    let (router, reads, screen) = makeRouter(
        configuration: configuration,
        engine: engine,
        gazetteer: gazetteer,
        metrics: metrics,
        endpointMetrics: endpointMetrics,
        work: work
    )
    let limits = configuration.limits
    let connections = ConnectionCounter(maximum: limits.maximumConnections)
    // The fast lane answers read routes below the router; with CORS on, the middleware's headers need the router.
    let lane =
        configuration.fastLane && configuration.corsOrigin == nil
        ? FastLane(
            reads: reads,
            metrics: endpointMetrics,
            serverName: "poi",
            logger: logger,
            accessLog: configuration.accessLog,
            workers: work.reads,
            screen: screen,
            problem: Problem.of
        ) : nil
    return Application(
        router: HeadAsGet(router: router),
        server: HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                responder: responder,
                limits: limits,
                connections: connections,
                lane: lane,
                tls: tls,
                streamedBodyPath: RouteTable.route("importRecords")?.path
            )
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "poi"),
        // Stopped in reverse order after the HTTP server: the caller's (followers), then imports, backups, webhooks.
        services: work.services(logger: logger) + services,
        onServerRunning: { channel in
            let address = channel.localAddress.map { address in
                address.protocol == .inet6
                    ? "[\(address.ipAddress ?? "::")]:\(address.port ?? 0)" : "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
            }
            await onServerRunning(address ?? "\(configuration.host):\(configuration.port)")
        },
        logger: logger
    )
}

/// The byte lane of the application's read routes outside any server (`poi bench wire`).
public func buildReadLane(
    configuration: ServerConfiguration,
    engine: SearchEngine,
    gazetteer: Gazetteer?,
    metrics: PrometheusCollectorRegistry?
) -> FastLane {
    let endpointMetrics = metrics.map { _ in EndpointMetrics() }
    let reads = makeRouter(configuration: configuration, engine: engine, gazetteer: gazetteer, metrics: metrics, endpointMetrics: endpointMetrics)
        .reads
    return FastLane(reads: reads, metrics: endpointMetrics, serverName: "poi", logger: Logger(label: "poi"), problem: Problem.of)
}

/// The v1 routes (docs/ARCHITECTURE.md, "The HTTP contract").
public func buildRouter(
    configuration: ServerConfiguration,
    engine: SearchEngine,
    gazetteer: Gazetteer?,
    metrics: PrometheusCollectorRegistry? = nil
) -> Router<AppRequestContext> {
    makeRouter(
        configuration: configuration,
        engine: engine,
        gazetteer: gazetteer,
        metrics: metrics,
        endpointMetrics: metrics.map { _ in EndpointMetrics() }
    ).router
}

/// The router, and its read operations and write screen for the fast lane.
func makeRouter(
    configuration: ServerConfiguration,
    engine: SearchEngine,
    gazetteer: Gazetteer?,
    metrics: PrometheusCollectorRegistry?,
    endpointMetrics: EndpointMetrics?,
    work: ServerWork = ServerWork()
) -> (router: Router<AppRequestContext>, reads: ReadRoutes, screen: WriteScreen) {
    let router = Router(context: AppRequestContext.self)
    let routes = RouteRegistrar(router: router)
    if let log = configuration.accessLog { router.add(middleware: AccessLogMiddleware(log: log)) }
    if let metrics, let endpointMetrics {
        router.add(middleware: RequestMetricsMiddleware(cache: endpointMetrics))
        let records = MetricNameDescriptor(namespace: "poi", metricName: "records", unitName: "", helpText: "Records held in memory, by kind.")
        let pois = metrics.makeGauge(descriptor: records, labels: [("kind", "poi")])
        let pins = metrics.makeGauge(descriptor: records, labels: [("kind", "pin")])
        // A replica of a shared store also reports where it stands in the store's change feed.
        let replica =
            engine.followsStore
            ? (
                sequence: metrics.gauge("poi_store_sequence", help: "The store's change sequence this replica has applied."),
                connected: metrics.gauge("poi_store_connected", help: "1 when this replica reached the store on its last attempt, else 0."),
                lag: metrics.gauge("poi_store_lag_seconds", help: "Seconds since this replica last knew it had every committed change.")
            )
            : nil
        // A store with an OpenStreetMap import (made at start or later, by an import): how far behind OpenStreetMap its
        // data is, and a followed feed's failures. The registry answers a gauge it has already for the same name.
        let osmGauges = { @Sendable in
            (
                sequence: metrics.gauge(
                    "poi_osm_sequence",
                    help: "The replication sequence the OpenStreetMap data stands at (-1: unknown)."
                ),
                timestamp: metrics.gauge("poi_osm_timestamp_seconds", help: "The OpenStreetMap data's time, in seconds since 1970."),
                lag: metrics.gauge("poi_osm_lag_seconds", help: "Seconds from the OpenStreetMap data's time to now."),
                applied: metrics.gauge("poi_osm_changes_applied", help: "Change files applied from the followed feed since start."),
                failures: metrics.gauge(
                    "poi_osm_change_failures",
                    help: "Looks at the followed feed that failed (unreachable, a gap, a change that could not be applied) since start."
                )
            )
        }
        let tokens = configuration.authenticator.tokens
        let providerKeys =
            tokens?.keyStatus != nil
            ? (
                keys: metrics.gauge("poi_auth_keys", help: "Signing keys of the identity provider in force."),
                age: metrics.gauge("poi_auth_keys_age_seconds", help: "Seconds since the identity provider's keys were last fetched."),
                reachable: metrics.gauge(
                    "poi_auth_provider_reachable",
                    help: "1 when the last fetch of the provider's keys succeeded, else 0."
                ),
                failures: metrics.gauge("poi_auth_key_fetch_failures", help: "Failed fetches of the provider's keys since start.")
            ) : nil
        routes.on("metrics") { _, _ -> Response in
            if let providerKeys, let status = tokens?.keyStatus {
                providerKeys.keys.set(to: Double(status.keys))
                providerKeys.age.set(to: status.fetchedAt.map { max(0, Date().timeIntervalSince($0)) } ?? -1)
                providerKeys.reachable.set(to: status.reachable ? 1 : 0)
                providerKeys.failures.set(to: Double(status.failures))
            }
            if let status = engine.osmStatus {
                let osm = osmGauges()
                osm.sequence.set(to: Double(status.sequence ?? -1))
                osm.timestamp.set(to: status.timestamp.flatMap(OSMDataStatus.date)?.timeIntervalSince1970 ?? 0)
                osm.lag.set(to: status.lagSeconds ?? -1)
                osm.applied.set(to: Double(status.applied))
                osm.failures.set(to: Double(status.failures))
            }
            let counts = engine.counts
            pois.set(to: Double(counts.pois))
            pins.set(to: Double(counts.pins))
            if let replica, let status = engine.replicationStatus {
                replica.sequence.set(to: Double(status.applied))
                replica.connected.set(to: status.connected ? 1 : 0)
                replica.lag.set(to: max(0, Date().timeIntervalSince(status.caughtUpAt)))
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer()))
            )
        }
    }
    if let origin = configuration.corsOrigin {
        // Opt-in CORS (`--cors ORIGIN`, or `*`): a web map on another origin may call the API, preflight included.
        router.add(
            middleware: CORSMiddleware(
                allowOrigin: origin == "*" ? .all : .custom(origin),
                allowHeaders: [.accept, .authorization, .contentType, .origin, RequestID.header],
                allowMethods: [.get, .head, .post, .put, .delete, .options],
                exposedHeaders: ["X-Request-Id", "Retry-After"],
                maxAge: .seconds(600)
            )
        )
    }
    router.add(middleware: ProblemMiddleware())
    if metrics == nil {
        routes.on("metrics") { _, _ -> Response in throw Problem(.notFound, "this server keeps no metrics") }
    }
    let write = WriteAccess(configuration)
    let tokens = configuration.authenticator.tokens
    QueryController(engine: engine).register(on: routes)
    TileController(engine: engine, tls: configuration.tls != nil, cache: TileCache(budget: configuration.tileCacheBytes)).register(on: routes)
    // Live areas: the engine's fences (poi serve keeps them beside the database), else fences in memory.
    if engine.fences == nil { engine.fences = try? FenceBook(store: FenceStore(path: nil)) }
    if let book = engine.fences {
        let webhooks = FenceWebhooks(book: book, policy: configuration.webhookPolicy)
        webhooks.start()
        work.webhooks.withLock { $0 = webhooks }
        FenceController(book: book, write: write, webhooks: webhooks, maximumBodySize: configuration.maximumBodySize).register(on: routes)
    }
    RecordController(engine: engine, write: write, writes: work.writes, maximumBodySize: configuration.maximumBodySize).register(on: routes)
    // The one geocoder every surface asks (v1, Nominatim, Photon, AMap): built here, once.
    let geocoder = gazetteer.map { Geocoder(engine: engine, gazetteer: $0) }
    GeoController(geocoder: geocoder, engine: engine, maximumBodySize: configuration.maximumBodySize).register(on: routes)
    routes.read("health") { input in
        let maximumLag = try input.parameters.double("max_lag", rule: "must be a number of seconds above 0 and at most 86400")
        if let maximumLag, !(maximumLag > 0 && maximumLag <= 86_400) {
            throw ParameterError("max_lag", "must be a number of seconds above 0 and at most 86400")
        }
        let counts = engine.counts
        let replication = engine.replicationStatus
        // A replica of a shared store: the change it has applied, whether it reaches the store and which server, and
        // how long ago it last knew it had every committed change (at most the poll interval while all is well).
        let lag = replication.map { max(0, Date().timeIntervalSince($0.caughtUpAt)) } ?? 0
        let stale = replication != nil && maximumLag.map { lag > $0 } == true
        var json = JSONWriter()
        json.beginObject()
        json.field("status", stale ? "stale" : "ok")
        json.field("pois", counts.pois)
        json.field("pins", counts.pins)
        if let replication {
            json.key("store")
            json.beginObject()
            json.field("sequence", Int(replication.applied))
            json.field("connected", replication.connected)
            if let server = engine.storeServer { json.field("host", server) }
            json.field("lagSeconds", (lag * 1000).rounded() / 1000)
            json.field("reloads", replication.reloads)
            json.endObject()
        }
        // An OpenStreetMap import: its replication sequence and OSM time, and the feed followed (poi serve --replicate).
        if let osm = engine.osmStatus {
            json.key("osm")
            json.beginObject()
            json.key("sequence")
            if let sequence = osm.sequence { json.number(sequence) } else { json.null() }
            json.key("timestamp")
            if let timestamp = osm.timestamp { json.string(timestamp) } else { json.null() }
            json.key("lagSeconds")
            if let lag = osm.lagSeconds { json.number(lag.rounded()) } else { json.null() }
            if let source = osm.source { json.field("source", source) }
            json.field("following", osm.following)
            if osm.following {
                json.field("applied", osm.applied)
                json.field("failures", osm.failures)
                if let error = osm.lastError { json.field("lastError", error) }
            }
            json.endObject()
        }
        // Live areas shared with other servers: the last event handed out, and whether the store could be read.
        if let fences = engine.fences?.followStatus {
            json.key("fences")
            json.beginObject()
            json.field("handed", Int(fences.handed))
            json.key("readSecondsAgo")
            if let read = fences.readAt { json.number((Date().timeIntervalSince(read) * 10).rounded() / 10) } else { json.null() }
            json.field("failures", fences.failures)
            if let error = fences.lastError { json.field("lastError", error) }
            json.endObject()
        }
        // Keys fetched from the identity provider: the server keeps serving tokens from the last keys when the
        // provider is down, and says so here.
        if let status = tokens?.keyStatus {
            json.key("auth")
            json.beginObject()
            json.field("source", status.source)
            json.field("keys", status.keys)
            json.field("providerReachable", status.reachable)
            json.key("fetchedSecondsAgo")
            if let fetched = status.fetchedAt { json.number((Date().timeIntervalSince(fetched) * 10).rounded() / 10) } else { json.null() }
            if let error = status.lastError { json.field("lastError", error) }
            json.endObject()
        }
        json.endObject()
        return ReadAnswer(status: stale ? .serviceUnavailable : .ok, contentType: "application/json", body: json.buffer)
    }
    let dataDirectory = configuration.dataDirectory ?? DataDirectory.resolve()
    let osm = try? OSMImporter.bundled(dataDirectory: dataDirectory, gazetteer: gazetteer)
    ImportController(engine: engine, osm: osm, write: write, tasks: work.imports, maximumImportSize: configuration.limits.maximumImportSize)
        .register(on: routes)
    BackupController(engine: engine, write: write, tasks: work.backups, directory: configuration.backupDirectory).register(on: routes)
    // The compatible services' operations: functions of the query string, answered on the byte lane like v1's reads.
    let categories = (configuration.dataDirectory ?? DataDirectory.resolve()) + "/categories.json"
    let adapters =
        GeocoderAdapters(engine: engine, geocoder: geocoder).operations
        + AMapAdapter(engine: engine, geocoder: geocoder, types: AMapTypes.load(path: categories)).operations
    for (operationId, answer) in adapters {
        let cost: ReadCost = operationId == "amapConvert" || operationId == "nominatimStatus" ? .light : .heavy
        routes.read(operationId, cost: cost) { input in
            let answer = answer(input.parameters)
            return ReadAnswer(status: answer.status, contentType: answer.contentType, body: answer.body)
        }
    }
    StudentLocationAdapter(engine: engine, write: write, writes: work.writes, maximumBodySize: configuration.maximumBodySize).register(on: routes)
    MapPageController(configuration: configuration.mapPage).register(on: routes)
    routes.on("openapi") { _, _ -> Response in JSONResponse.body(OpenAPIDocument.json) }
    routes.finish()
    let screen = WriteScreen(routes: routes.writes) { [write] request in
        write.refusal(authorization: request.authorization, client: request.client)
    }
    return (router, routes.reads, screen)
}

/// Building JSON responses.
enum JSONResponse {
    static func body(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, geojson: Bool = false) -> Response {
        Response(
            status: status,
            headers: [.contentType: geojson ? "application/geo+json" : "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}

extension PrometheusCollectorRegistry {
    /// A gauge under its full name (the registry answers the one it has already for the same name).
    fileprivate func gauge(_ name: String, help: String) -> Gauge {
        makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help))
    }
}
