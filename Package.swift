// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "poi-search",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "poi", targets: ["poi"]),
        .library(name: "GeoCore", targets: ["GeoCore"]),
        .library(name: "SpatialIndex", targets: ["SpatialIndex"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CProj",
            pkgConfig: "proj",
            providers: [.apt(["libproj-dev"])]
        ),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPrefetch"),
        .systemLibrary(name: "CNodeKernels"),
        .systemLibrary(name: "CChecksum"),
        .systemLibrary(name: "CScheduling"),
        .target(name: "GeoCore", dependencies: ["CProj"], swiftSettings: swiftSettings),
        // Work spread over threads: a value made on a thread of its own, a map over ranges on every core.
        .target(name: "Parallelism", dependencies: ["CScheduling"], swiftSettings: swiftSettings),
        .target(name: "BundledData", dependencies: ["CZlib"], swiftSettings: swiftSettings),
        .target(name: "SnapshotFile", dependencies: ["CZlib", "CChecksum", "Parallelism"], swiftSettings: swiftSettings),
        .target(name: "OSM", dependencies: ["CZlib", "BundledData", "Parallelism"], swiftSettings: swiftSettings),
        .target(name: "SpatialIndex", dependencies: ["GeoCore", "SnapshotFile", "CPrefetch", "CNodeKernels"], swiftSettings: swiftSettings),
        // The records (POIs, pins, addresses, fences' events), their formats, and the protocol of a store of record
        // (`StoreOfRecord`, `FenceLog`): no storage engine. SQLite is `Catalog`'s, PostgreSQL `PostgresStore`'s.
        .target(name: "Records", dependencies: ["GeoCore", "BundledData", "OSM", "Parallelism"], swiftSettings: swiftSettings),
        .target(name: "TextIndex", dependencies: ["SnapshotFile"], swiftSettings: swiftSettings),
        .target(
            name: "Gazetteer",
            dependencies: ["GeoCore", "Records", "SpatialIndex", "TextIndex", "BundledData", "SnapshotFile", "Parallelism"],
            swiftSettings: swiftSettings
        ),
        // The store of record in one SQLite file (GRDB): records, addresses, the OpenStreetMap mirror, fences, backups.
        .target(
            name: "Catalog",
            dependencies: [
                "GeoCore", "Records", "BundledData", "OSM", "CChecksum", "Parallelism", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Data sets made from outside sources: OpenStreetMap extracts (placed in the gazetteer's cities), the bundled
        // database, synthetic POIs drawn from the gazetteer's places.
        .target(
            name: "Datasets",
            dependencies: ["Catalog", "Records", "Gazetteer", "GeoCore", "BundledData", "OSM", "SnapshotFile", "Parallelism"],
            swiftSettings: swiftSettings
        ),
        // Who may write what: API keys with scopes, users' tokens (JWT), rate limits. Serves no HTTP; fetches the
        // identity provider's keys over HTTPS (AsyncHTTPClient) when they are named by URL.
        .target(
            name: "Access",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PostgresStore",
            dependencies: [
                "Records", "GeoCore", "Parallelism",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SearchEngine",
            dependencies: [
                "GeoCore", "SpatialIndex", "TextIndex", "Records", "Gazetteer", "BundledData", "SnapshotFile", "CPrefetch", "Parallelism",
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // Mapbox Vector Tiles: the protobuf encoding of a layer of points.
        .target(name: "VectorTile", swiftSettings: swiftSettings),
        .target(
            name: "API",
            dependencies: [
                "GeoCore", "Records", "SearchEngine", "Gazetteer", "TextIndex", "BundledData", "VectorTile",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.copy("OpenAPI")],
            swiftSettings: swiftSettings
        ),
        // The HTTP/1 transport: connection guards, the byte lane for reads, response writing. Knows nothing of the API:
        // it is given a route table of read handlers and Hummingbird's responder for the rest.
        .target(
            name: "HTTPServer",
            dependencies: [
                "BundledData", "CScheduling", "Parallelism",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HTTPAPI",
            dependencies: [
                "API", "HTTPServer", "GeoCore", "SearchEngine", "Gazetteer", "Catalog", "Records", "Datasets", "BundledData", "Access", "OSM",
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Web")],
            swiftSettings: swiftSettings
        ),
        // The start-up assembly: which store, snapshot and data a process opens, and opening them.
        .target(
            name: "Startup",
            dependencies: ["SearchEngine", "Catalog", "Records", "Datasets", "Gazetteer", "BundledData", "PostgresStore", "OSM", "Parallelism"],
            swiftSettings: swiftSettings
        ),
        // What `poi bench` measures in-process, and its harness: the indexes, keyword search, geocoding, the byte lane
        // without sockets; one JSON line a run.
        .target(
            name: "Bench",
            dependencies: [
                "HTTPAPI", "HTTPServer", "SearchEngine", "Gazetteer", "Startup", "Datasets", "Catalog", "Records", "SpatialIndex", "GeoCore",
                "BundledData",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "poi",
            dependencies: [
                "GeoCore",
                "Parallelism",
                "SpatialIndex",
                "Gazetteer",
                "Catalog",
                "Records",
                "Datasets",
                "SearchEngine",
                "API",
                "HTTPAPI",
                "HTTPServer",
                "Bench",
                "Startup",
                "BundledData",
                "SnapshotFile",
                "PostgresStore",
                "Access",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the tests share: scratch directories, seeds, certificates, tokens, Python oracles.
        .target(
            name: "TestSupport",
            dependencies: [
                "GeoCore", "Gazetteer", "Records", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "GeoCoreTests", dependencies: ["GeoCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ParallelismTests", dependencies: ["Parallelism"], swiftSettings: swiftSettings),
        .testTarget(name: "SnapshotFileTests", dependencies: ["SnapshotFile", "CChecksum", "GeoCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SpatialIndexTests", dependencies: ["SpatialIndex", "CNodeKernels", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "TextIndexTests", dependencies: ["TextIndex", "SnapshotFile", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "GazetteerTests",
            dependencies: ["Gazetteer", "GeoCore", "Records", "BundledData", "SnapshotFile", "TestSupport", "TextIndex"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CatalogTests",
            dependencies: [
                "Catalog", "Records", "Datasets", "Gazetteer", "BundledData", "GeoCore", "OSM", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "OSMTests", dependencies: ["OSM", "GeoCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SearchEngineTests",
            dependencies: [
                "SearchEngine", "API", "Catalog", "Records", "Datasets", "GeoCore", "SpatialIndex", "BundledData", "Gazetteer", "TextIndex",
                "SnapshotFile",
                "PostgresStore",
                "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APITests",
            dependencies: ["API", "SearchEngine", "Records", "GeoCore", "SpatialIndex", "Gazetteer", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPAPITests",
            dependencies: [
                "API", "HTTPAPI", "HTTPServer", "VectorTile", "SearchEngine", "Catalog", "Records", "Datasets", "GeoCore", "Gazetteer", "BundledData",
                "TestSupport", "Access",
                "OSM", "Startup", "PostgresStore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: ["PostgresStore", "Records", "GeoCore", "TestSupport", .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AccessTests",
            dependencies: ["Access", "TestSupport", .product(name: "JWTKit", package: "jwt-kit")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "poiTests",
            dependencies: ["poi", "Access", "Catalog", "GeoCore", "Records", "Startup", "SearchEngine", "Gazetteer", "TestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)

// The package-benchmark suites (benchmarks/Benchmarks/*) are only part of the package when POI_BENCHMARKS is set, so
// `make test` and `make run` never build package-benchmark. Run them with `benchmarks/run --micro`.
if Context.environment["POI_BENCHMARKS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(
        .executableTarget(
            name: "GeoBenchmarks",
            dependencies: [
                "GeoCore",
                "SpatialIndex",
                "Catalog",
                "Gazetteer",
                "BundledData",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "benchmarks/Benchmarks/GeoBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    )
}
