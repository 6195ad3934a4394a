import Foundation
import Testing

@testable import PostgresStore

/// Store URLs in libpq's convention, read without connecting.
@Suite struct StoreURLTests {
    @Test func severalHostsWithTheirPortsAndParameters() throws {
        let url = try StoreURL(
            "postgresql://poi:s%40cret@10.0.0.1:5433,db2.example,[::1]:6000/poi?target_session_attrs=primary&sslmode=require&connect_timeout=3"
        )
        #expect(url.user == "poi" && url.password == "s@cret" && url.database == "poi")
        #expect(
            url.hosts == [.init(name: "10.0.0.1", port: 5433), .init(name: "db2.example", port: 5432), .init(name: "::1", port: 6000)]
        )
        #expect(url.sessionAttributes == .primary && url.sslMode == .require && url.connectTimeout == 3)
        #expect(url.location == "postgresql://poi@10.0.0.1:5433,db2.example:5432,[::1]:6000/poi?target_session_attrs=primary&sslmode=require")
        #expect(try url.configurations().count == 3)
    }

    @Test func severalHostsMeanReadWriteUnlessToldOtherwise() throws {
        #expect(try StoreURL("postgresql://poi@h1:1,h2:2/poi").sessionAttributes == .readWrite)
        #expect(try StoreURL("postgresql://poi@h1/poi").sessionAttributes == .any)
        #expect(try StoreURL("postgresql://poi@h1:1,h2:2/poi?target_session_attrs=any").sessionAttributes == .any)
        #expect(try StoreURL("postgres://poi@h1/poi?sslmode=disable").sslMode == .disable)
    }

    /// Each mistake is named, before anything connects (`poi serve --store` turns it into a usage error).
    @Test(arguments: [
        ("mysql://poi@h/poi", "not a postgresql://"),
        ("postgresql://h/poi", "names no user"),
        ("postgresql://poi@/poi", "names no host"),
        ("postgresql://poi@h1,,h2/poi", "an empty host"),
        ("postgresql://poi@h1:0/poi", "between 1 and 65535"),
        ("postgresql://poi@h1:abc/poi", "between 1 and 65535"),
        ("postgresql://poi@h1", "names no database"),
        ("postgresql://poi@h1/poi?target_session_attrs=standby", "target_session_attrs must be one of any, read-write, primary"),
        ("postgresql://poi@h1/poi?sslmode=on", "sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
        ("postgresql://poi@h1/poi?sslmode=verify-full", "needs sslrootcert=FILE"),
        ("postgresql://poi@h1/poi?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem", "is not a readable file"),
        ("postgresql://poi@h1/poi?sslrootcert=/etc/hostname", "sslmode is disable"),
        ("postgresql://poi@h1/poi?connect_timeout=0", "connect_timeout must be a whole number"),
        ("postgresql://poi@h1/poi?application_name=x", "unsupported URL parameter application_name"),
        ("postgresql://poi@h1/poi?sslmode=require&sslmode=disable", "sslmode is given twice"),
        ("postgresql://poi@[::1/poi", "unclosed ["),
    ])
    func mistakesAreNamed(url: String, expected: String) {
        let problem = PostgresStore.problem(with: url)
        #expect(problem?.contains(expected) == true, "\(url): \(problem ?? "accepted")")
    }
}
