import Catalog
import Foundation
import GeoCore
import PostgresNIO
import Records
import TestSupport
import Testing

@testable import PostgresStore
@testable import SearchEngine

/// Several hosts in the store URL: when the primary dies and its synchronous standby is promoted, every engine finds
/// the new primary; nothing acknowledged is lost, and the feed goes on from its sequence.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct StoreFailoverTests {
    /// Retries `body` while the store answers `.unavailable`, up to `seconds` (the time a promotion takes on a loaded
    /// machine); fails with the last error if it never succeeds.
    @discardableResult static func eventually<T>(_ what: String, seconds: Double = 60, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try body()
            } catch let error as SearchError {
                guard case .unavailable = error, Date() < deadline else {
                    throw TestPostgres.Failure(description: "\(what): still failing after \(seconds) s: \(error)")
                }
                usleep(100_000)
            }
        }
    }

    @Test func writesResumeOnThePromotedStandbyWithNothingAcknowledgedLost() throws {
        let cluster = TestCluster()
        let primary = try cluster.start("primary")
        let standby = try cluster.start("standby", ["PG_STANDBY_OF": "127.0.0.1:\(primary.port)", "PG_STANDBY_NAME": "standby1"])
        // From now on the primary waits for the standby on every commit (set once the standby streams: the primary's
        // own createdb would wait for it otherwise).
        try cluster.makeSynchronous(primary: primary.url, standby: "standby1")
        let url = "postgresql://poi@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/poi"
        let writer = try ReplicationTests.engine(url)
        let reader = try ReplicationTests.engine(url)
        var random = SplitMix64(seed: 38)
        var acknowledged: [POIRecord] = []
        for index in 0..<20 {
            let poi = ReplicationTests.poi("before-\(index)", &random)
            try writer.upsertPOI(poi)
            acknowledged.append(poi)
        }
        reader.catchUp()
        let sequenceBefore = try #require(reader.replicationStatus?.applied)

        try cluster.kill(primary.directory, port: primary.port)
        // No primary: reads go on from memory, a write is refused as unavailable (503). The first refusals may name
        // the connection the primary's death broke; once reconnected, the refusal names the standby as read-only.
        #expect(writer.poi(id: "before-0") == acknowledged[0])
        var reasons: [String] = []
        for _ in 0..<10 {
            do {
                try writer.upsertPOI(ReplicationTests.poi("orphan", &random))
                Issue.record("a write with no primary succeeded")
                break
            } catch {
                guard case .unavailable(let reason) = error else {
                    Issue.record("a write with no primary answered \(error), not .unavailable")
                    return
                }
                reasons.append(reason)
                if reason.contains("read-only") { break }
            }
        }
        #expect(reasons.last?.contains("read-only") == true, "the refusals never named the standby's state: \(reasons)")

        try cluster.promote(standby.directory)
        var after: [POIRecord] = []
        for index in 0..<20 {
            let poi = ReplicationTests.poi("after-\(index)", &random)
            try Self.eventually("a write after the promotion") { try writer.upsertPOI(poi) }
            after.append(poi)
        }
        try Self.eventually("the reader's catch-up") {
            reader.catchUp()
            guard reader.replicationStatus?.connected == true else { throw SearchError.unavailable("not connected yet") }
        }
        let status = try #require(reader.replicationStatus)
        #expect(status.applied == sequenceBefore + 20, "the feed goes on from its sequence: \(sequenceBefore) then \(status.applied)")
        #expect(status.reloads == 0)
        for poi in acknowledged + after {
            #expect(reader.poi(id: poi.id) == poi, "\(poi.id) on the reader after the failover")
        }
        #expect(reader.poi(id: "orphan") == nil)
        try ReplicationTests.expectMatches(reader, standby.url, seed: 38, "the reader against the promoted standby")
    }

    /// A store that went back (restored from a backup, or a failover to a standby that missed commits) is behind what
    /// a replica applied: the replica reloads rather than skip the changes that will reuse those numbers.
    @Test func aStoreThatWentBackIsReloaded() throws {
        let cluster = TestCluster()
        let server = try cluster.start("rewound")
        let follower = try ReplicationTests.engine(server.url)
        var random = SplitMix64(seed: 39)
        try follower.upsertPOI(ReplicationTests.poi("kept", &random))
        // The backup: a copy of the database now (CREATE DATABASE … TEMPLATE needs the source without sessions).
        let admin = server.url.replacingOccurrences(of: #"/poi$"#, with: "/postgres", options: .regularExpression)
        let endSessions = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'poi' AND pid <> pg_backend_pid()"
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", endSessions])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE backup TEMPLATE poi"])
        for index in 0..<3 { try Self.eventually("a write") { try follower.upsertPOI(ReplicationTests.poi("lost-\(index)", &random)) } }
        follower.catchUp()
        let applied = try #require(follower.replicationStatus?.applied)
        // Restore: the backup takes the database's place.
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", endSessions])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "ALTER DATABASE poi RENAME TO lost"])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "ALTER DATABASE backup RENAME TO poi"])
        try Self.eventually("the follower's catch-up") {
            follower.catchUp()
            guard follower.replicationStatus?.connected == true else { throw SearchError.unavailable("not connected yet") }
        }
        let status = try #require(follower.replicationStatus)
        #expect(status.reloads == 1 && status.applied < applied, "a store behind the replica is reloaded: \(status), applied \(applied)")
        #expect(follower.poi(id: "kept") != nil && follower.poi(id: "lost-0") == nil)
        try ReplicationTests.expectMatches(follower, server.url, seed: 39, "the follower after the store went back")
    }
}
