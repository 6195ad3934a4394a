import CScheduling
import Foundation

extension Thread {
    /// A thread, not yet started, that the kernel knows by `name` (`top -H`, `perf`, `/proc/PID/task/*/comm`; at most
    /// 15 bytes are kept). Foundation on Linux keeps a `name` set before `start()` to itself: the kernel's name is then
    /// that of the thread that made it (a Dispatch worker, "…root.default-qos"), so every background thread of the
    /// server looked alike. The name is given from within the thread as it starts.
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            _ = poi_name_calling_thread(String(decoding: name.utf8.prefix(15), as: UTF8.self))
            body()
        }
        thread.name = name
        return thread
    }

    /// Puts the calling thread under the kernel's idle policy (SCHED_IDLE): it runs on what the other threads leave,
    /// and a thread of the server waking on its core — an event loop under the batch policy too — preempts it at once.
    /// Threads it starts inherit the policy.
    /// - Returns: whether the kernel agreed (if not, the thread runs as before).
    @discardableResult public static func idleCallingThread() -> Bool { poi_schedule_calling_thread_as_idle() == 0 }
}
