import API
import Catalog
import Datasets
import Foundation
import Gazetteer
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import Startup
import TestSupport
import Testing

/// OpenStreetMap change files reaching a running server: `POST /v1/import` with an osmChange body, and a followed
/// replication feed (`poi serve --replicate`, `OSMFollower`) — the new POIs and houses answered at once, `/health`
/// and `/metrics` saying where the data stands, and a gap in the feed reported, not applied.
@Suite struct OSMChangeRouteTests {
    let scratch = ScratchDirectory("poi-osm-route")

    /// Waits until `/health` says what `done` looks for (the follower works on its own thread), or 60 s.
    func health(_ client: some TestClientProtocol, awaiting what: String, _ done: ([String: Any]) -> Bool) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        for _ in 0..<6_000 {
            last = try json(try await client.execute(uri: "/health", method: .get))
            if done(last["osm"] as? [String: Any] ?? [:]) { return last }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("awaited \(what) for 60 s; /health said \(last)")
        return last
    }

    func names(_ client: some TestClientProtocol, _ query: String) async throws -> [String] {
        let page = try decode(Answers.Page.self, try await client.execute(uri: "/v1/search?q=\(query)&limit=5", method: .get))
        return page.results.compactMap(\.name)
    }

    /// The bundled Helsinki extract imported through `POST /v1/import`, awaited.
    static func importHelsinki(_ client: some TestClientProtocol) async throws {
        let extract = try Data(contentsOf: Repository.data.appendingPathComponent("Helsinki.osm.pbf"))
        let imported = try decode(
            Answers.ImportTask.self,
            try await client.execute(
                uri: "/v1/import?name=Helsinki.osm.pbf",
                method: .post,
                headers: [.contentType: "application/x-protobuf"],
                body: ByteBuffer(bytes: extract)
            )
        )
        #expect(try await finishedImport(client, imported.id)?.status == "succeeded")
    }

    static func change(_ body: String) -> String { #"<?xml version="1.0"?><osmChange version="0.6">\#(body)</osmChange>"# }

    @Test func changesReachTheServerByImportAndByFeed() async throws {
        let path = scratch.file("db.sqlite")
        let engine = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy)
        let data = Repository.data.path
        let gazetteer = BundledGazetteer.shared
        let app = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: gazetteer, metrics: testRegistry)
        try await app.test(.router) { client in
            try await Self.importHelsinki(client)
            // A cafe and a house, created by a change file sent to the server.
            let created = Self.change(
                """
                <create>
                  <node id="9000000001" version="1" timestamp="2030-01-01T00:00:00Z" lat="60.1690" lon="24.9400">
                    <tag k="amenity" v="cafe"/><tag k="name" v="Kahvila Muutos"/></node>
                  <node id="9000000002" version="1" timestamp="2030-01-01T00:00:00Z" lat="60.1692" lon="24.9405">
                    <tag k="addr:street" v="Muutoskatu"/><tag k="addr:housenumber" v="5"/><tag k="addr:city" v="Helsinki"/></node>
                </create>
                """
            )
            let accepted = try decode(
                Answers.ImportTask.self,
                try await client.execute(
                    uri: "/v1/import?name=created.osc",
                    method: .post,
                    headers: [.contentType: "application/osmchange+xml"],
                    body: ByteBuffer(string: created)
                )
            )
            let task = try await finishedImport(client, accepted.id)
            #expect(task?.status == "succeeded" && task?.imported == 1, "\(String(describing: task))")
            #expect(try await names(client, "Muutos") == ["Kahvila Muutos"])
            let house = try decode(
                Answers.Places.self,
                try await client.execute(uri: "/v1/geocode?q=Muutoskatu%205,%20Helsinki&limit=1", method: .get)
            )
            #expect(house.results.first?.type == "house" && house.results.first?.address?.housenumber == "5", "\(house.results)")
            var status = try await health(client, awaiting: "the change file's time") { $0["timestamp"] as? String == "2030-01-01T00:00:00Z" }
            #expect((status["osm"] as? [String: Any])?["following"] as? Bool == false)
            // A change of an object the data does not have: the task fails naming it, nothing changes.
            let unknown = Self.change(#"<delete><node id="9999999999" version="2"/></delete>"#)
            let refused = try decode(
                Answers.ImportTask.self,
                try await client.execute(uri: "/v1/import?format=osmchange&name=bad.osc", method: .post, body: ByteBuffer(string: unknown))
            )
            let failed = try await finishedImport(client, refused.id)
            #expect(failed?.status == "failed" && failed?.error?.contains("delete of node 9999999999") == true, "\(String(describing: failed))")

            // A feed in a directory, at sequence 8, with the data at 7: followed live.
            _ = try CatalogStore(path: path).updateOSM { mirror in
                var state = try mirror.state() ?? OSMMirrorState()
                state.sequence = 7
                try mirror.setState(state)
            }
            let feed = scratch.file("feed")
            try FileManager.default.createDirectory(atPath: feed + "/000/000", withIntermediateDirectories: true)
            let renamed = Self.change(
                """
                <modify><node id="9000000001" version="2" timestamp="2030-01-01T00:01:00Z" lat="60.1690" lon="24.9400">
                  <tag k="amenity" v="cafe"/><tag k="name" v="Kahvila Seuraava"/></node></modify>
                """
            )
            try Data(renamed.utf8).write(to: URL(fileURLWithPath: feed + "/000/000/008.osc.gz"))
            try Data("sequenceNumber=8\ntimestamp=2030-01-01T00\\:01\\:00Z\n".utf8).write(to: URL(fileURLWithPath: feed + "/000/000/008.state.txt"))
            try Data("sequenceNumber=8\ntimestamp=2030-01-01T00\\:01\\:00Z\n".utf8).write(to: URL(fileURLWithPath: feed + "/state.txt"))
            let importer = try OSMImporter.bundled(dataDirectory: data, gazetteer: gazetteer)
            let follower = try OSMFollower(engine: engine, importer: importer, source: feed, interval: 0.05) { _ in }
            follower.start()
            defer { follower.stop() }
            status = try await health(client, awaiting: "sequence 8 applied from the feed") { $0["sequence"] as? Int == 8 }
            let osm = status["osm"] as? [String: Any] ?? [:]
            #expect(osm["timestamp"] as? String == "2030-01-01T00:01:00Z" && osm["following"] as? Bool == true && osm["source"] as? String == feed)
            #expect(try await names(client, "Seuraava") == ["Kahvila Seuraava"])
            #expect(try await names(client, "Muutos").isEmpty)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("poi_osm_sequence 8"), "\(metrics.split(separator: "\n").filter { $0.contains("osm") })")
            // The feed moves to 10 without 9: a gap, reported and not applied.
            try Data("sequenceNumber=10\n".utf8).write(to: URL(fileURLWithPath: feed + "/state.txt"))
            status = try await health(client, awaiting: "the gap reported") { ($0["lastError"] as? String)?.contains("a gap") == true }
            #expect((status["osm"] as? [String: Any])?["sequence"] as? Int == 8)
        }
    }

    /// A change file applied by a server with snapshots is laid over the mapped address index and written beside its
    /// snapshot, not built again whole: the next start reads both, and answers as an index built afresh from every
    /// address the store holds after the change (drawn queries of every kind, `AddressAnswers`).
    @Test func aRestartReadsTheChangesLaidOverTheAddressSnapshot() async throws {
        let path = scratch.file("layer.sqlite")
        let policy = SearchEngine.SnapshotPolicy(path: path + ".snapshot")
        let engine = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy, snapshot: policy)
        let app = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: BundledGazetteer.shared, metrics: testRegistry)
        let seed = testSeed("aRestartReadsTheChangesLaidOverTheAddressSnapshot") % 1_000_000
        let extract = Repository.data.appendingPathComponent("Helsinki.osm.pbf").path
        let change = scratch.file("drawn.osc")
        _ = try PythonScript.run(["scripts/osm/changes.py", extract, change, "--seed", "\(seed)", "--changes", "300"])
        try await app.test(.router) { client in
            try await Self.importHelsinki(client)
            let accepted = try decode(
                Answers.ImportTask.self,
                try await client.execute(
                    uri: "/v1/import?format=osmchange&name=drawn.osc",
                    method: .post,
                    body: ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: change)))
                )
            )
            let task = try await finishedImport(client, accepted.id)
            #expect(task?.status == "succeeded", "SEED=\(seed): \(String(describing: task))")
        }
        #expect(!engine.addresses.osm.changes.isEmpty, "SEED=\(seed): the change was laid over the index")
        #expect(FileManager.default.fileExists(atPath: SearchEngine.changesPath(policy.addressPath)), "SEED=\(seed): the changes written")
        let restarted = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy, snapshot: policy)
        #expect(restarted.addressStartup.hasSuffix("laid over it"), "SEED=\(seed): \(restarted.addressStartup)")
        #expect(restarted.addresses.osm.changes == engine.addresses.osm.changes)
        let stored = try CatalogStore(path: path).loadAddresses()
        AddressAnswers.expectAlike(restarted.addresses, AddressIndex(stored), stored, seed: seed, "restarted over the changes")
    }
}
