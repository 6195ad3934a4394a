import Catalog
import Dispatch
import Foundation
import GRDB
import TestSupport
import Testing

@Suite struct CatalogStoreLockTests {
    let scratch = ScratchDirectory("poi-lock")

    /// Another process holding the file's write lock (a command importing beside the server, or two commands started
    /// at once, each checking the migrations in a write transaction) makes an open wait for it, not fail with
    /// "database is locked".
    @Test func openingWaitsForAnotherWritersLock() throws {
        let path = scratch.file("locked.sqlite")
        _ = try CatalogStore(path: path)
        let other = try DatabaseQueue(path: path)
        let holding = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try! other.inTransaction(.immediate) { _ in
                holding.signal()
                Thread.sleep(forTimeInterval: 0.5)
                return .commit
            }
            released.signal()
        }
        holding.wait()
        // Opened while the other connection holds the lock.
        let store = try CatalogStore(path: path)
        released.wait()
        #expect(store.path == path)
    }
}
