import Foundation
import Parallelism
import Synchronization
import Testing

/// `Thread.named`: the kernel knows the thread by its name (what `top -H` and `perf` show), cut to 15 bytes.
struct NamedThreadTests {
    /// The calling thread's name as the kernel has it.
    static func kernelName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    @Test(arguments: ["osm-replication", "poi-snapshot", "a-name-longer-than-fifteen-bytes"])
    func theKernelHasTheName(name: String) {
        #if os(Linux)
        let seen = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.named(name) {
            seen.withLock { $0 = Self.kernelName() }
            done.signal()
        }
        .start()
        done.wait()
        #expect(seen.withLock { $0 } == String(name.prefix(15)))
        #endif
    }
}
