import API
import Catalog
import Foundation
import Gazetteer
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing

/// `POST /v1/import` and `GET /v1/tasks/{id}`: a body imported into the running engine and its store, reported as a
/// task, with the contract's rules for bad input.
@Suite struct LiveImportTests {
    let scratch = ScratchDirectory("poi-import")

    func engine(_ name: String = "db.sqlite") throws -> (SearchEngine, String) {
        let path = scratch.file(name)
        return (try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy), path)
    }

    func importApp(_ engine: SearchEngine, apiKey: String? = nil) -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(apiKey: apiKey), engine: engine, gazetteer: nil, metrics: testRegistry)
    }

    static let rows = """
        {"id":"i1","name":"Sauna Arla","category":"leisure.sauna","lat":60.1850,"lon":24.9530}
        {"id":"i2","name":"Kotiharjun Sauna","category":"leisure.sauna","lat":60.1826,"lon":24.9560}
        {"id":"i3","name":"broken","category":"leisure.sauna","lat":95,"lon":0}
        {"id":"i1","name":"Sauna Arla","category":"leisure.sauna","address":"Kaarlenkatu 15","lat":60.1850,"lon":24.9530}
        """

    @Test func importedRecordsAreQueryableAndDurableWhenTheTaskSucceeds() async throws {
        let (engine, path) = try engine()
        try await importApp(engine).test(.router) { client in
            let accepted = try await client.execute(
                uri: "/v1/import?format=jsonl&name=saunas.jsonl",
                method: .post,
                body: ByteBuffer(string: Self.rows)
            )
            #expect(accepted.status == .accepted)
            let task = try decode(Answers.ImportTask.self, accepted)
            let id = task.id
            #expect(accepted.headers[.location] == "/v1/tasks/\(id)")
            #expect(task.status == "queued" || task.status == "running")
            let done = try await finishedImport(client, id)
            #expect(done?.status == "succeeded", "\(done)")
            #expect(done?.imported == 2)
            #expect(done?.skipped == 1)
            #expect(done?.duplicates == 1)
            #expect(done?.bytes == Self.rows.utf8.count && done?.bytesRead == Self.rows.utf8.count)
            let problems = try #require(done?.problems)
            #expect(problems.map(\.line) == [3, 4])
            #expect((problems[0].reason ?? "").contains("latitude"))
            // The running server sees them, the later duplicate row winning.
            let search = try decode(Answers.Page.self, try await client.execute(uri: "/v1/search?q=sauna", method: .get))
            #expect(search.ids.sorted() == ["i1", "i2"])
            let one = try decode(Answers.Record.self, try await client.execute(uri: "/v1/pois/i1", method: .get))
            #expect(one.address == "Kaarlenkatu 15")
            let nearby = try decode(Answers.Page.self, try await client.execute(uri: "/v1/nearby?lat=60.1826&lon=24.9560&limit=1", method: .get))
            #expect(nearby.ids == ["i2"])
            let list = try decode(Answers.ImportTasks.self, try await client.execute(uri: "/v1/tasks", method: .get))
            #expect(list.results.first?.id == id)
        }
        // And the store has them: a new engine over the same file.
        let reopened = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy)
        await reopened.addressesSettled()  // indexed by the step a new engine starts
        #expect(reopened.counts.pois == 2)
        #expect(reopened.poi(id: "i1")?.address == "Kaarlenkatu 15")
    }

    /// An OpenStreetMap extract through the running server: its POIs (ways placed inside their buildings), houses
    /// and streets answer at once; a second import of the same extract removes nothing and adds nothing.
    @Test func anOpenStreetMapExtractMakesPOIsHousesAndStreets() async throws {
        let (engine, path) = try engine()
        let extract = Repository.data.appendingPathComponent("Helsinki.osm.pbf")
        let bytes = try Data(contentsOf: extract)
        let gazetteer = BundledGazetteer.shared
        let app = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: gazetteer, metrics: testRegistry)
        try await app.test(.router) { client in
            var imported: [Int] = []
            for round in 1...2 {
                let accepted = try decode(
                    Answers.ImportTask.self,
                    try await client.execute(
                        uri: "/v1/import?name=Helsinki.osm.pbf",
                        method: .post,
                        headers: [.contentType: "application/x-protobuf"],
                        body: ByteBuffer(bytes: bytes)
                    )
                )
                let done = try await finishedImport(client, accepted.id)
                #expect(done?.status == "succeeded", "round \(round): \(done)")
                imported.append(done?.imported ?? 0)
                #expect(
                    done?.problems?.first?.reason ?? "" != "",
                    "a clipped extract reports its dangling ways"
                )
            }
            #expect(
                imported[0] > 1_500 && imported[1] == imported[0] && engine.counts.pois == imported[0],
                "\(imported), \(engine.counts.pois) in the engine"
            )
            #expect(engine.poi(id: "osm-r4055") == nil, "a building part without a name is no POI")
            let house = try decode(
                Answers.Places.self,
                try await client.execute(uri: "/v1/geocode?q=Mannerheimintie%2013%20a,%20Helsinki&limit=1", method: .get)
            )
            let first = try #require(house.results.first)
            #expect(first.type == "house")
            #expect(first.address?.housenumber == "13A")
            let reverse = try decode(Answers.Reverse.self, try await client.execute(uri: "/v1/reverse?lat=60.17357&lon=24.93567", method: .get))
            #expect(reverse.address?.type == "house")
            let streets = try decode(
                Answers.FeatureCollection.self,
                try await client.execute(uri: "/v1/streets?bbox=24.938,60.168,24.940,60.169", method: .get)
            )
            #expect(!streets.features.isEmpty && streets.features.allSatisfy { $0.geometry?.type == "LineString" })
            let wrongKind = try decode(
                Answers.ImportTask.self,
                try await client.execute(
                    uri: "/v1/import?format=osmpbf&kind=pin",
                    method: .post,
                    body: ByteBuffer(bytes: bytes)
                )
            )
            let failed = try await finishedImport(client, wrongKind.id)
            #expect(failed?.status == "failed" && (failed?.error ?? "").contains("kind must be poi"), "\(failed)")
        }
        // The store has the addresses: a new engine over the same file answers houses too.
        let reopened = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy)
        await reopened.addressesSettled()  // indexed by the step a new engine starts
        #expect(reopened.addresses.houseCount > 1_400)
    }

    static func geocode(_ client: some TestClientProtocol, _ text: String) async throws -> Answers.Place? {
        let q = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        return try decode(Answers.Places.self, try await client.execute(uri: "/v1/geocode?q=\(q)&limit=1", method: .get)).results.first
    }

    /// A record's own `addr:*` tags make it a house as soon as it is written — by an import task or by the POI
    /// routes — and geocoding, reverse geocoding and a restart answer it; its update moves the house, its deletion
    /// removes it.
    @Test func recordsWithAddressTagsAreHousesAsSoonAsWritten() async throws {
        let (engine, path) = try engine("houses.sqlite")
        let gazetteer = BundledGazetteer.shared
        let app = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: gazetteer, metrics: testRegistry)
        let rows = """
            {"id":"h1","name":"Kahvila Testi","category":"food.cafe","lat":60.16990,"lon":24.93840,"tags":{"addr:housenumber":"7","addr:street":"Testikatu","addr:postcode":"00100","addr:city":"Helsinki"}}
            {"id":"h2","name":"Kioski","category":"shop.kiosk","lat":60.16995,"lon":24.93900}
            """
        try await app.test(.router) { client in
            let accepted = try decode(
                Answers.ImportTask.self,
                try await client.execute(uri: "/v1/import?format=jsonl&name=h.jsonl", method: .post, body: ByteBuffer(string: rows))
            )
            #expect(try await finishedImport(client, accepted.id)?.status == "succeeded")
            let imported = try await Self.geocode(client, "Testikatu 7, Helsinki")
            #expect(imported?.type == "house" && imported?.address?.housenumber == "7" && imported?.address?.postcode == "00100", "\(imported)")
            let reverse = try decode(Answers.Reverse.self, try await client.execute(uri: "/v1/reverse?lat=60.16991&lon=24.93841", method: .get))
            #expect(reverse.address?.type == "house" && reverse.address?.address?.street == "Testikatu", "\(reverse)")

            let moved = """
                {"name":"Kahvila Testi","category":"food.cafe","lat":60.16990,"lon":24.93840,"tags":{"addr:housenumber":"9","addr:street":"Testikatu"}}
                """
            #expect(try await client.execute(uri: "/v1/pois/h1", method: .put, body: ByteBuffer(string: moved)).status == .ok)
            #expect(try await Self.geocode(client, "Testikatu 9")?.type == "house")
            #expect(try await Self.geocode(client, "Testikatu 7")?.address?.housenumber == nil, "the old number is gone")
        }
        // A restart from the store answers the same.
        let reopened = try SearchEngine(store: CatalogStore(path: path), taxonomy: taxonomy)
        await reopened.addressesSettled()  // indexed by the step a new engine starts
        let again = try reopened.addresses.search(GeocodeQuery(text: "Testikatu 9", limit: 1)) { _, _ in nil }.first
        #expect(again?.id == "h1" && again?.housenumber == "9")
        let restarted = buildApplication(configuration: ServerConfiguration(), engine: reopened, gazetteer: gazetteer, metrics: testRegistry)
        try await restarted.test(.router) { client in
            let deleted = try await client.execute(uri: "/v1/pois/h1", method: .delete)
            #expect(deleted.status == .noContent)
            let after = try await Self.geocode(client, "Testikatu 9")
            #expect(after?.type != "house", "\(after)")
        }
    }

    @Test func strictImportsAllOrNothing() async throws {
        let (engine, _) = try engine()
        try await importApp(engine).test(.router) { client in
            let accepted = try decode(
                Answers.ImportTask.self,
                try await client.execute(uri: "/v1/import?format=jsonl&strict=true&name=s.jsonl", method: .post, body: ByteBuffer(string: Self.rows))
            )
            let done = try await finishedImport(client, accepted.id)
            #expect(done?.status == "failed")
            #expect(done?.error?.contains("s.jsonl:3:") == true, "\(String(describing: done))")
            #expect(done?.problems?.first?.line == 3)
            #expect(engine.counts.pois == 0)
        }
    }

    @Test func formatFromTheContentTypeAndGzipBodies() async throws {
        let (engine, _) = try engine()
        let csv = "id,name,category,latitude,longitude\nc1,Cafe Regatta,food.cafe,60.1832,24.9094\n"
        let gzipped = scratch.url.appendingPathComponent("p.csv.gz")
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "printf '%s' \"$0\" | gzip -c > \"$1\"", csv, gzipped.path]
        try gzip.run()
        gzip.waitUntilExit()
        try await importApp(engine).test(.router) { client in
            let accepted = try decode(
                Answers.ImportTask.self,
                try await client.execute(
                    uri: "/v1/import",
                    method: .post,
                    headers: [.contentType: "text/csv; charset=utf-8"],
                    body: ByteBuffer(bytes: try Data(contentsOf: gzipped))
                )
            )
            #expect(accepted.format == "csv")
            let done = try await finishedImport(client, accepted.id)
            #expect(done?.status == "succeeded" && done?.imported == 1, "\(done)")
            #expect(engine.poi(id: "c1")?.name == "Cafe Regatta")
        }
    }

    @Test(arguments: [
        ("/v1/import", "format is required"),
        ("/v1/import?format=xml", "format must be jsonl, geojson, csv, osmpbf or osmchange"),
        ("/v1/import?format=jsonl&kind=place", "kind must be poi or pin"),
        ("/v1/import?format=jsonl&crs=EPSG:99999", "crs: unknown coordinate system"),
        ("/v1/import?format=jsonl&strict=yes", "strict must be true or false"),
        ("/v1/import?format=jsonl&name=", "name must be 1 to 200 characters"),
    ])
    func badParametersAreNamed(_ uri: String, _ fragment: String) async throws {
        let (engine, _) = try engine()
        try await importApp(engine).test(.router) { client in
            let response = try await client.execute(uri: uri, method: .post, body: ByteBuffer(string: Self.rows))
            #expect(response.status == .badRequest, "\(uri)")
            #expect((try decode(Answers.Problem.self, response).detail ?? "").contains(fragment), "\(uri)")
            let tasks = try decode(Answers.ImportTasks.self, try await client.execute(uri: "/v1/tasks", method: .get))
            #expect(tasks.results.isEmpty, "a refused import makes no task")
        }
    }

    @Test func emptyBodiesUnknownTasksAndTheKey() async throws {
        let (engine, _) = try engine()
        try await importApp(engine, apiKey: "import-key-123").test(.router) { client in
            let unauthorized = try await client.execute(uri: "/v1/import?format=jsonl", method: .post, body: ByteBuffer(string: Self.rows))
            #expect(unauthorized.status == .unauthorized)
            let empty = try await client.execute(
                uri: "/v1/import?format=jsonl",
                method: .post,
                headers: [.authorization: "Bearer import-key-123"],
                body: ByteBuffer()
            )
            #expect(empty.status == .badRequest)
            #expect((try decode(Answers.Problem.self, empty).detail ?? "").contains("the body is empty"))
            #expect(try await client.execute(uri: "/v1/tasks/t_nope", method: .get).status == .unauthorized, "tasks are the importer's")
            let unknown = try await client.execute(uri: "/v1/tasks/t_nope", method: .get, headers: [.authorization: "Bearer import-key-123"])
            #expect(unknown.status == .notFound)
            #expect((try decode(Answers.Problem.self, unknown).detail ?? "").contains("no import task t_nope"))
            #expect(engine.counts.pois == 0)
        }
    }
}
