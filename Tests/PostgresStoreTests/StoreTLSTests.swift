import Foundation
import GeoCore
import PostgresNIO
import Records
import TestSupport
import Testing

@testable import PostgresStore

/// TLS to PostgreSQL: `require` encrypts, `verify-full` also checks the certificate's authority and host, and each
/// refusal says which check failed.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct StoreTLSTests {
    @Test func verifyFullConnectsAndEachWrongSettingIsRefusedClearly() throws {
        let cluster = TestCluster()
        let (ca, certificate, key) = try TestCertificates.make("pg", in: cluster.scratch)
        let (otherCA, _, _) = try TestCertificates.make("other", in: cluster.scratch)
        let server = try cluster.start(
            "tls",
            ["PG_SSL_CERT": certificate, "PG_SSL_KEY": key, "PG_LISTEN": "127.0.0.1,127.0.0.2"]
        )
        let base = "postgresql://poi@127.0.0.1:\(server.port)/poi"
        var random = SplitMix64(seed: 40)

        let verified = try PostgresStore(url: base + "?sslmode=verify-full&sslrootcert=\(ca)")
        let encrypted = try verified.main.run { connection in
            try connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: verified.logger).answer().first?.decode(
                Bool.self
            )
        }
        #expect(encrypted == true, "the session is encrypted")
        let poi = POIRecord(id: "tls", name: "Kahvila \(random.next() % 1_000)", category: "food.cafe", city: "Helsinki", lat: 60.17, lon: 24.94)
        _ = try verified.commit([.put(.poi(poi))])
        #expect(try verified.record(.poi, id: "tls") != nil)
        // require: encrypted without checking the certificate; verify-ca: the authority only, so another host name is fine.
        #expect(throws: Never.self) { try PostgresStore(url: base + "?sslmode=require").poiCount() }
        #expect(throws: Never.self) {
            try PostgresStore(url: "postgresql://poi@127.0.0.2:\(server.port)/poi?sslmode=verify-ca&sslrootcert=\(ca)").poiCount()
        }

        func refusal(_ url: String) -> String {
            do {
                _ = try PostgresStore(url: url)
                return "accepted"
            } catch {
                return error.description
            }
        }
        let wrongAuthority = refusal(base + "?sslmode=verify-full&sslrootcert=\(otherCA)")
        #expect(wrongAuthority.contains("not signed by a certificate authority in sslrootcert"), "\(wrongAuthority)")
        let wrongHost = refusal("postgresql://poi@127.0.0.2:\(server.port)/poi?sslmode=verify-full&sslrootcert=\(ca)")
        #expect(wrongHost.contains("not issued for the host"), "\(wrongHost)")
        let plain = refusal(base)
        #expect(plain.contains("no encryption") || plain.contains("pg_hba.conf"), "a server that takes only TLS refuses plain text: \(plain)")
    }

    @Test func requireAgainstAServerWithoutTLSIsRefused() throws {
        let cluster = TestCluster()
        let server = try cluster.start("plain")
        do {
            _ = try PostgresStore(url: "postgresql://poi@127.0.0.1:\(server.port)/poi?sslmode=require")
            Issue.record("sslmode=require connected to a server without TLS")
        } catch {
            #expect(error.description.contains("does not offer TLS"), "\(error)")
        }
        #expect(throws: Never.self) { try PostgresStore(url: "postgresql://poi@127.0.0.1:\(server.port)/poi?sslmode=prefer").poiCount() }
    }

}
