/// Plain-text tables for the CLI, aligned by display width (CJK characters count as two columns).
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        let all = (header.allSatisfy(\.isEmpty) ? [] : [header]) + rows
        guard let columns = all.map(\.count).max(), columns > 0 else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in all { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], width(cell)) } }
        var lines: [String] = []
        for (index, row) in all.enumerated() {
            let cells = row.enumerated().map { i, cell in cell + String(repeating: " ", count: widths[i] - width(cell)) }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
            if index == 0 && !header.allSatisfy(\.isEmpty) {
                lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
            }
        }
        return lines.joined(separator: "\n")
    }

    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            switch scalar.value {
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6:
                return total + 2
            default:
                return total + (scalar.properties.generalCategory == .nonspacingMark ? 0 : 1)
            }
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
