import Catalog
import Dispatch
import Foundation
import GRDB
import Records
import Synchronization
import TestSupport
import Testing

@Suite struct CatalogStoreLockTests {
    let scratch = ScratchDirectory("poi-lock")

    /// Another process holding the file's write lock (a command importing beside the server, or two commands started
    /// at once, each checking the migrations in a write transaction) makes an open wait for it, not fail with
    /// "database is locked": the open finishes only after the lock is let go, and then succeeds.
    @Test func openingWaitsForAnotherWritersLock() throws {
        let path = scratch.file("locked.sqlite")
        _ = try CatalogStore(path: path)
        let other = try DatabaseQueue(path: path)
        let holding = DispatchSemaphore(value: 0)
        let letGo = DispatchSemaphore(value: 0)
        let events = Mutex<[String]>([])
        let holderError = Mutex<String?>(nil)
        DispatchQueue.global().async {
            do {
                try other.inTransaction(.immediate) { _ in
                    holding.signal()
                    letGo.wait()
                    events.withLock { $0.append("lock let go") }
                    return .commit
                }
            } catch {
                holderError.withLock { $0 = "\(error)" }
                holding.signal()
            }
        }
        holding.wait()
        try #require(holderError.withLock { $0 } == nil, "the other connection could not take the lock")
        let opened = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        DispatchQueue.global().async {
            let result: String
            do {
                result = try CatalogStore(path: path).path
            } catch {
                result = "failed: \(error)"
            }
            events.withLock { $0.append("opened") }
            outcome.withLock { $0 = result }
            opened.signal()
        }
        // While the lock is held the open neither finishes nor fails. (Had it not started yet, this waits in vain
        // and proves nothing, but never fails wrongly.)
        #expect(opened.wait(timeout: .now() + 0.3) == .timedOut, "the open finished while another process held the lock")
        letGo.signal()
        opened.wait()
        #expect(events.withLock { $0 } == ["lock let go", "opened"])
        #expect(outcome.withLock { $0 } == path)
    }
}
