import BundledData
import Foundation
import TextIndex

/// The category taxonomy of data/categories.json: English and Chinese labels and synonyms per category, so that a
/// keyword search for "咖啡" or "cafe" also finds records of category food.cafe whatever their names.
public struct CategoryTaxonomy: Sendable {
    /// Normalized label → categories it names.
    let categoriesByLabel: [String: [String]]
    public let categories: [String]

    public init(labels: [String: [String]]) {
        var byLabel: [String: [String]] = [:]
        for (category, names) in labels {
            for name in names {
                let key = TextNormalizer.normalize(name)
                if !key.isEmpty && !(byLabel[key]?.contains(category) ?? false) { byLabel[key, default: []].append(category) }
            }
        }
        categoriesByLabel = byLabel
        categories = labels.keys.sorted()
    }

    /// Loads `categories.json` from the data directory.
    public static func load(directory: String = DataDirectory.resolve()) throws(SearchError) -> CategoryTaxonomy {
        let path = directory + "/categories.json"
        guard let data = FileManager.default.contents(atPath: path),
            let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["categories"] as? [[String: Any]]
        else { throw .storage("cannot read the category taxonomy \(path)") }
        var labels: [String: [String]] = [:]
        for entry in list {
            guard let id = entry["id"] as? String else { continue }
            // Broad parents ("food", "shop") are not used as labels: "shop" would match every shop-like name.
            guard id.contains(".") else { continue }
            // Labels in every language the entry lists: English, Chinese and the local languages of the bundled
            // data (Finnish, Swedish for Helsinki).
            labels[id] = ["en", "zh", "fi", "sv"].flatMap { entry[$0] as? [String] ?? [] }
        }
        return CategoryTaxonomy(labels: labels)
    }

    func categories(forLabel normalized: String) -> [String] { categoriesByLabel[normalized] ?? [] }
}

extension String {
    /// Whether this category is `prefix` or below it (`food` matches `food.cafe`, not `foodtruck`).
    func isCategory(under prefix: String) -> Bool {
        hasPrefix(prefix) && (count == prefix.count || dropFirst(prefix.count).first == ".")
    }
}
