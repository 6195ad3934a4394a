import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A new directory for one test's files (databases, snapshots, gazetteers, imports), removed with everything in it
/// when the last reference to it goes: a suite's instance lives for one test, so its directory does too. Those that
/// a static holds (a database shared by a suite's tests) go when the test process exits, with the process's root
/// of scratch directories. A test run so leaves nothing behind in the temporary directory, however many times it runs.
public final class ScratchDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// - Parameter prefix: names what the directory is for (`poi-live`, `poi-import`), to find it while a test runs.
    public init(_ prefix: String) {
        url = ScratchDirectory.root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` in the directory.
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `bytes` to `name` in the directory; answers its path.
    public func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// Writes `text` (UTF-8) to `name` in the directory; answers its path.
    public func write(_ name: String, _ text: String) -> String { write(name, Array(text.utf8)) }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// This process's directory of scratch directories, removed when the process exits.
    static let root: URL = {
        let root = processRoot()
        try! FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ScratchDirectory.processRoot()) }
        return root
    }()

    private static func processRoot() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("poi-tests-\(getpid())")
    }
}
