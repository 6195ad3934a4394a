import API
import Catalog
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing

/// `POST /v1/backups` and `GET /v1/backups/{id}`: a backup of the running server's store, taken as a task, that
/// `Backup.verify` accepts and that holds what was written before it; the import scope; 409 without an embedded store.
@Suite struct BackupRouteTests {
    let scratch = ScratchDirectory("poi-backup-route")

    func finished(_ client: some TestClientProtocol, _ id: String, key: String) async throws -> [String: Any] {
        for _ in 0..<6_000 {
            let response = try await client.execute(uri: "/v1/backups/\(id)", method: .get, headers: [.authorization: "Bearer \(key)"])
            let task = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            if task["status"] as? String == "succeeded" || task["status"] as? String == "failed" { return task }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("backup task \(id) did not finish within 60 s")
        return [:]
    }

    @Test func aBackupTaskCopiesTheStoreAndSaysWhere() async throws {
        let path = scratch.file("db.sqlite")
        let engine = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy)
        let key = "backup-key-0001"
        var configuration = ServerConfiguration(apiKey: key)
        configuration.backupDirectory = scratch.file("backups")
        let app = buildApplication(configuration: configuration, engine: engine, gazetteer: nil, metrics: testRegistry)
        try await app.test(.router) { client in
            let auth: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
            for i in 0..<5 {
                let body = #"{"uniqueKey":"b\#(i)","firstName":"B","lastName":"\#(i)","mapString":"x","mediaURL":"","lat":60.1,"lon":24.9}"#
                #expect(try await client.execute(uri: "/v1/pins", method: .post, headers: auth, body: ByteBuffer(string: body)).status == .created)
            }
            #expect(try await client.execute(uri: "/v1/backups", method: .post).status == .unauthorized)
            let accepted = try await client.execute(uri: "/v1/backups", method: .post, headers: auth)
            #expect(accepted.status == .accepted, "\(String(buffer: accepted.body))")
            let id = try #require(try json(accepted)["id"] as? String)
            #expect(accepted.headers[.location] == "/v1/backups/\(id)")
            let task = try await finished(client, id, key: key)
            #expect(task["status"] as? String == "succeeded" && task["pins"] as? Int == 5 && task["pois"] as? Int == 0, "\(task)")
            let directory = try #require(task["path"] as? String)
            #expect(directory.hasPrefix(scratch.file("backups") + "/"))
            let manifest = try Backup.verify(directory)
            #expect(manifest.pins == 5 && task["sha256"] as? String == manifest.files[0].sha256)
            let list = try json(try await client.execute(uri: "/v1/backups", method: .get, headers: auth))
            #expect((list["results"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
            #expect(try await client.execute(uri: "/v1/backups/b_none", method: .get, headers: auth).status == .notFound)
        }
        // A server with no embedded store (here: none at all) has nothing to copy: 409, with what to do instead.
        let bare = buildApplication(configuration: ServerConfiguration(), engine: makeEngine(), gazetteer: nil, metrics: testRegistry)
        try await bare.test(.router) { client in
            let refused = try await client.execute(uri: "/v1/backups", method: .post)
            #expect(refused.status == .conflict && String(buffer: refused.body).contains("pg_basebackup"), "\(String(buffer: refused.body))")
        }
    }
}
