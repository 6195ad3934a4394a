import Gazetteer

/// The gazetteer of the bundled data (`data/`), built once for the whole test process: every test target is linked
/// into one bundle, and a debug build of it costs ~20 CPU-seconds. A `Gazetteer` is immutable, so sharing it is safe.
public enum BundledGazetteer {
    public static let shared: Gazetteer = {
        do {
            return try Gazetteer.load(directory: Repository.data.path)
        } catch {
            fatalError("the bundled gazetteer must load from \(Repository.data.path): \(error)")
        }
    }()
}
