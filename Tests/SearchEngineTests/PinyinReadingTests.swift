import BundledData
import Foundation
import TestSupport
import Testing

@testable import SearchEngine
@testable import TextIndex

/// The readings of whole names against pypinyin (an independent implementation on the same open tables), on every
/// Chinese division name of the bundled data and on chain and landmark names of Beijing.
@Suite struct PinyinReadingTests {
    static let landmarks = [
        "肯德基", "麦当劳", "星巴克", "瑞幸咖啡", "海底捞火锅", "西贝莜面村", "全聚德", "绿茶餐厅", "眉州东坡", "大董烤鸭", "兰州拉面", "汉堡王",
        "德克士", "真功夫", "老乡鸡", "华莱士", "好利来", "巴黎贝甜", "味多美", "喜茶", "奈雪的茶", "蜜雪冰城", "茶百道", "永辉超市", "盒马鲜生",
        "华润万家", "物美超市", "家乐福", "沃尔玛", "全家便利店", "罗森便利店", "便利蜂", "优衣库", "李宁", "安踏", "海澜之家", "小米之家",
        "苏宁易购", "国美电器", "万达广场", "大悦城", "万象城", "银泰百货", "来福士广场", "新华书店", "西西弗书店", "中国石化加油站",
        "中国工商银行", "中国建设银行", "中国银行", "招商银行", "中国农业银行", "如家酒店", "汉庭酒店", "全季酒店", "锦江之星", "同仁堂",
        "北京理工大学", "北京大学", "清华大学", "中国人民大学", "北京师范大学", "中关村", "五道口", "西直门", "朝阳公园", "长城饭店",
        "重庆小面", "天安门广场", "故宫博物院", "颐和园", "圆明园", "鸟巢", "王府井", "三里屯", "南锣鼓巷", "什刹海", "后海", "长安街",
        "西单大悦城", "国家图书馆", "首都机场", "北京西站", "银行", "长春", "厦门", "蚌埠", "六安", "乐清",
    ]

    /// Names of the bundled Chinese divisions (provinces, cities, districts).
    static func divisionNames() throws -> [String] {
        var names: [String] = []
        try GzipFile.forEachLine(PythonScript.repository.path + "/data/china_divisions.tsv.gz") { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            if fields.count > 2 { names.append(String(fields[1])) }
        }
        return names
    }

    @Test func namesReadAsPypinyinReadsThem() throws {
        let dictionary = try #require(PinyinDictionary.bundled)
        let names = Array(Set(try Self.divisionNames() + Self.landmarks)).sorted()
        let scratch = ScratchDirectory("poi-pinyin-readings")
        let file = scratch.path + "/names.txt"
        try names.joined(separator: "\n").appending("\n").write(toFile: file, atomically: true, encoding: .utf8)
        let theirs = try PythonScript.run(["scripts/pinyin/readings.py", file]).split(separator: "\n", omittingEmptySubsequences: false)
        var characters = 0
        var differing: [(name: String, ours: String, theirs: String)] = []
        for (name, line) in zip(names, theirs) {
            let ours = dictionary.reading(of: name).map { $0.map { dictionary.syllable($0) } ?? "-" }.joined(separator: " ")
            characters += name.count
            if ours != String(line) { differing.append((name, ours, String(line))) }
        }
        print("pinyin readings: \(names.count) names, \(characters) characters, \(differing.count) names read otherwise than pypinyin")
        for d in differing.prefix(40) { print("  \(d.name): ours \(d.ours), pypinyin \(d.theirs)") }
        #expect(theirs.count >= names.count)
        // Both read the same tables with forward maximum matching over the phrases: a name read otherwise is a bug here.
        #expect(differing.count * 100 <= names.count, "\(differing.prefix(20))")
    }

    /// Names whose polyphones only the phrase table settles, as a person reads them.
    @Test(arguments: [
        ("银行", "yin hang"), ("重庆", "chong qing"), ("长城", "chang cheng"), ("绿茶", "lv cha"), ("中国建设银行", "zhong guo jian she yin hang"),
        ("长安街", "chang an jie"), ("厦门", "xia men"), ("蚌埠", "beng bu"), ("六安", "lu an"),
    ])
    func aPolyphoneReadsAsThePhraseTableHasIt(_ name: String, _ expected: String) throws {
        let dictionary = try #require(PinyinDictionary.bundled)
        #expect(dictionary.reading(of: name).map { $0.map { dictionary.syllable($0) } ?? "-" }.joined(separator: " ") == expected)
    }

    /// The table as the dictionary holds it, against the rows read again here with `String`'s own splitting: every
    /// character's readings in their order, every phrase's first reading of each character (a later row of the same
    /// phrase wins, as it does there), and the syllables.
    @Test func everyRowOfTheBundledTableIsHeldAsWritten() throws {
        let dictionary = try #require(PinyinDictionary.bundled)
        var characters: [UInt32: [String]] = [:]
        var phrases: [String: [String]] = [:]
        var syllables = Set<String>()
        try GzipFile.forEachLine(PythonScript.repository.path + "/data/pinyin.tsv.gz") { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { return }
            if fields[0] == "c" {
                characters[fields[1].unicodeScalars.first!.value] = fields[2].split(separator: ",").map(String.init)
                syllables.formUnion(characters[fields[1].unicodeScalars.first!.value]!)
            } else {
                let parts = fields[2].split(separator: " ").map { $0.split(separator: "|").map(String.init) }
                phrases[fields[1]] = parts.map { $0[0] }
                for part in parts { syllables.formUnion(part) }
            }
        }
        #expect(characters.count > 20_000 && phrases.count > 10_000, "\(characters.count) characters, \(phrases.count) phrases")
        #expect(dictionary.syllables == syllables.sorted())
        for (scalar, readings) in characters {
            #expect(dictionary.readings(of: scalar).map { dictionary.syllable($0) } == Array(readings.prefix(255)), "U+\(String(scalar, radix: 16))")
        }
        #expect(dictionary.phrases.count == phrases.count)
        for (phrase, readings) in phrases {
            #expect(dictionary.phrases[phrase].map { $0.map { dictionary.syllable($0) } } == readings, "\(phrase)")
        }
    }

    @Test func theTableIsRefusedWithItsLineWhenMalformed() {
        #expect(throws: PinyinTableError.self) { try PinyinDictionary(table: "c\t好\thao\n\nc\t你\tni,Nǐ\n") }
        do throws(PinyinTableError) {
            _ = try PinyinDictionary(table: "c\t好\thao\n\np\t你好\tni\n")
            Issue.record("a phrase with one reading for two characters was taken")
        } catch {
            #expect(error.line == 2, "empty lines are not counted: \(error)")
        }
        #expect(throws: PinyinTableError.self) { try PinyinDictionary(table: "c\t好\thao\nx\t好\thao\n") }
        #expect(throws: PinyinTableError.self) { try PinyinDictionary(table: "p\t你好\tni\n") }
        #expect(throws: PinyinTableError.self) { try PinyinDictionary(table: "c\t好\tHǎo\n") }
        #expect((try? PinyinDictionary(table: "c\t好\thao\nc\t你\tni\np\t你好\tni hao\n"))?.syllables == ["hao", "ni"])
    }
}
