/// The syntax of a category path (`food`, `food.cafe`, `shop.convenience`): dot-separated parts of ASCII letters,
/// digits and `_`, at most 64 characters. Records store it in lower case; queries match case-insensitively.
public enum CategoryPath {
    public static let rule = "must be a category path such as food or food.cafe"

    /// The path in lower case, or nil when `text` is not one.
    public static func normalized(_ text: String) -> String? {
        let lowered = text.lowercased()
        let valid =
            !lowered.isEmpty && lowered.count <= 64
            && lowered.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                !part.isEmpty && part.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" }
            }
        return valid ? lowered : nil
    }
}
