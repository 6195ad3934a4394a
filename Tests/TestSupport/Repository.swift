import Foundation

/// Where the repository is, for tests that read its data or run its scripts.
public enum Repository {
    /// The repository's root directory (this file is Tests/TestSupport/Repository.swift).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bundled data (`data/`).
    public static let data = root.appendingPathComponent("data")

    /// A file of the repository by its path from the root ("data/Helsinki.osm.pbf").
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}
