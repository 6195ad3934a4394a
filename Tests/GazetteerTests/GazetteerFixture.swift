import BundledData

@testable import Gazetteer

/// The bundled gazetteer, loaded once for all tests of this target.
enum GazetteerFixture {
    static let shared: Gazetteer = {
        do {
            return try Gazetteer.load(directory: DataDirectory.resolve())
        } catch {
            fatalError("the bundled gazetteer must load from data/: \(error)")
        }
    }()
}
