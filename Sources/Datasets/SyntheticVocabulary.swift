import GeoCore
import Records

/// Word lists behind `SyntheticPOIGenerator`: a category mix weighted roughly like OpenStreetMap's urban POIs, and
/// brand, area and street names of the kind found on real maps.
enum SyntheticVocabulary {
    static let categories: [(String, Int)] = [
        ("food.restaurant", 160), ("food.cafe", 90), ("food.fast_food", 70), ("food.bar", 40), ("food.bakery", 25),
        ("food.tea", 20), ("shop.supermarket", 45), ("shop.convenience", 55), ("shop.clothes", 50), ("shop.electronics", 20),
        ("shop.beauty", 35), ("shop.mall", 8), ("shop.books", 8), ("shop.florist", 8), ("transport.bus_stop", 90),
        ("transport.subway_station", 12), ("transport.train_station", 5), ("transport.parking", 40), ("transport.fuel", 15),
        ("education.school", 20), ("education.university", 5), ("education.kindergarten", 12), ("education.library", 4),
        ("health.hospital", 10), ("health.pharmacy", 25), ("health.dentist", 10), ("finance.bank", 20), ("finance.atm", 20),
        ("lodging.hotel", 25), ("tourism.museum", 5), ("tourism.attraction", 10), ("leisure.park", 20), ("leisure.sports", 20),
        ("leisure.cinema", 5), ("public.post_office", 8), ("public.police", 4), ("public.toilets", 10), ("public.worship", 12),
        ("office", 30),
    ]

    static let chineseBrands: [String: [String]] = [
        "food.cafe": ["星巴克", "瑞幸咖啡", "Manner咖啡", "Costa咖啡", "太平洋咖啡", "Tims咖啡", "库迪咖啡"],
        "food.restaurant": ["海底捞火锅", "西贝莜面村", "外婆家", "全聚德", "小龙坎火锅", "绿茶餐厅", "眉州东坡", "大董烤鸭", "兰州拉面"],
        "food.fast_food": ["麦当劳", "肯德基", "汉堡王", "德克士", "真功夫", "老乡鸡", "华莱士"],
        "food.bar": ["精酿啤酒吧", "清吧", "小酒馆"],
        "food.bakery": ["好利来", "85度C", "巴黎贝甜", "味多美", "面包新语"],
        "food.tea": ["喜茶", "奈雪的茶", "蜜雪冰城", "茶百道", "一点点", "古茗"],
        "shop.supermarket": ["永辉超市", "盒马鲜生", "华润万家", "物美超市", "家乐福", "沃尔玛"],
        "shop.convenience": ["全家便利店", "7-Eleven便利店", "罗森便利店", "便利蜂", "美宜佳"],
        "shop.clothes": ["优衣库", "ZARA", "H&M", "李宁", "安踏", "海澜之家"],
        "shop.electronics": ["华为授权体验店", "小米之家", "苹果授权店", "苏宁易购", "国美电器"],
        "shop.beauty": ["美发沙龙", "丝芙兰", "屈臣氏"],
        "shop.mall": ["万达广场", "大悦城", "万象城", "银泰百货", "来福士广场"],
        "shop.books": ["新华书店", "西西弗书店", "钟书阁"],
        "shop.florist": ["花店", "野兽派花店"],
        "transport.bus_stop": ["公交站"],
        "transport.subway_station": ["地铁站"],
        "transport.train_station": ["火车站", "高铁站"],
        "transport.parking": ["停车场", "地下停车场"],
        "transport.fuel": ["中国石化加油站", "中国石油加油站", "壳牌加油站"],
        "education.school": ["第一中学", "实验小学", "外国语学校", "第二中学"],
        "education.university": ["理工大学", "师范大学", "财经大学", "医科大学", "交通大学"],
        "education.kindergarten": ["幼儿园", "双语幼儿园"],
        "education.library": ["图书馆", "少儿图书馆"],
        "health.hospital": ["人民医院", "中医医院", "妇幼保健院", "社区卫生服务中心"],
        "health.pharmacy": ["老百姓大药房", "同仁堂", "一心堂", "大参林药店"],
        "health.dentist": ["口腔诊所", "拜博口腔"],
        "finance.bank": ["中国工商银行", "中国建设银行", "中国银行", "招商银行", "中国农业银行"],
        "finance.atm": ["ATM自助银行"],
        "lodging.hotel": ["如家酒店", "汉庭酒店", "全季酒店", "锦江之星", "希尔顿酒店", "亚朵酒店"],
        "tourism.museum": ["博物馆", "美术馆", "科技馆"],
        "tourism.attraction": ["古镇", "公园景区", "观景台", "古寺"],
        "leisure.park": ["公园", "湿地公园", "森林公园"],
        "leisure.sports": ["健身中心", "体育馆", "游泳馆"],
        "leisure.cinema": ["万达影城", "CGV影城", "大地影院"],
        "public.post_office": ["中国邮政", "顺丰速运", "菜鸟驿站"],
        "public.police": ["派出所"],
        "public.toilets": ["公共厕所"],
        "public.worship": ["寺", "教堂"],
        "office": ["科技有限公司", "大厦", "写字楼", "商务中心"],
        "other": ["商店"],
    ]

    static let chineseAreas = [
        "中关村", "国贸", "望京", "五道口", "西单", "王府井", "陆家嘴", "徐家汇", "静安寺", "南京西路", "天河", "珠江新城",
        "科技园", "春熙路", "解放碑", "西湖", "钟楼", "新街口", "光谷", "人民广场", "火车站", "大学城", "高新区", "滨江",
        "东门", "西门", "南门", "北站", "万达", "长安街", "建设路", "中山路", "人民路", "解放路", "和平路", "新华路",
    ]

    static let chineseRoads = [
        "中关村南大街", "建国路", "人民路", "解放路", "中山路", "南京路", "淮海中路", "天河路", "长安街", "和平路",
        "新华路", "建设路", "文化路", "学院路", "科技路", "滨江路", "世纪大道", "东风路", "青年路", "幸福路",
    ]

    static let latinBrands: [String: [String]] = [
        "food.cafe": [
            "Starbucks", "Costa Coffee", "Café {surname}", "{place} Coffee Roasters", "Espresso House", "Blue Bottle Coffee", "Kahvila {surname}",
            "Le Petit Café",
        ],
        "food.restaurant": [
            "Trattoria {surname}", "{place} Kitchen", "The Golden Dragon", "Sushi {surname}", "Taverna Olympia", "Bistro {surname}", "La Piazza",
            "Curry House", "Steakhouse {surname}",
        ],
        "food.fast_food": ["McDonald's", "Burger King", "Subway", "KFC", "Hesburger", "Five Guys", "Domino's Pizza", "Taco Bell"],
        "food.bar": ["The Red Lion", "{surname}'s Pub", "Irish Bar", "Wine Bar {place}", "Brewdog"],
        "food.bakery": ["Bakery {surname}", "Le Fournil", "{place} Bakehouse", "Paul", "Backwerk"],
        "food.tea": ["Tea House {surname}", "Chatime", "Gong Cha"],
        "shop.supermarket": ["Lidl", "Aldi", "Carrefour", "Tesco", "K-Market", "S-Market", "Walmart", "Rewe", "Edeka", "Spar"],
        "shop.convenience": ["7-Eleven", "R-kioski", "Circle K", "FamilyMart", "Corner Store {surname}"],
        "shop.clothes": ["H&M", "Zara", "Uniqlo", "{surname} Fashion", "Mango", "Nike Store"],
        "shop.electronics": ["MediaMarkt", "Apple Store", "Verkkokauppa", "Samsung Store", "Phone Repair {place}"],
        "shop.beauty": ["Hair Studio {surname}", "Barber {surname}", "Sephora"],
        "shop.mall": ["{place} Shopping Centre", "City Mall", "Galleria {place}"],
        "shop.books": ["Waterstones", "Akateeminen Kirjakauppa", "{place} Books", "Barnes & Noble"],
        "shop.florist": ["Flowers by {surname}", "Kukkakauppa {surname}"],
        "transport.bus_stop": ["{place} Bus Station", "Central Square", "Market Street", "Railway Station", "Hospital", "Town Hall", "University"],
        "transport.subway_station": ["{place} Central", "Central Station", "Park Station", "Harbour Station"],
        "transport.train_station": ["{place} Central Station", "{place} Railway Station", "{place} North"],
        "transport.parking": ["Parking {place}", "P-Centre", "Park & Ride"],
        "transport.fuel": ["Shell", "Neste", "BP", "Esso", "TotalEnergies", "ABC"],
        "education.school": ["{place} Primary School", "{surname} School", "{place} High School", "International School {place}"],
        "education.university": ["University of {place}", "{place} Technical University", "{place} School of Economics"],
        "education.kindergarten": ["Kindergarten {surname}", "Little Stars Daycare"],
        "education.library": ["{place} Public Library", "Central Library"],
        "health.hospital": ["{place} General Hospital", "St. Mary's Hospital", "{place} Health Centre"],
        "health.pharmacy": ["Boots", "Apteekki {place}", "Pharmacie {surname}", "CVS Pharmacy", "Walgreens"],
        "health.dentist": ["Dental Clinic {surname}", "Smile Dental"],
        "finance.bank": ["Nordea", "HSBC", "Deutsche Bank", "BNP Paribas", "Santander", "Chase", "OP"],
        "finance.atm": ["Otto", "ATM", "Cash Point"],
        "lodging.hotel": ["Hilton {place}", "Hotel {surname}", "Holiday Inn", "Scandic {place}", "Ibis {place}", "Grand Hotel {place}"],
        "tourism.museum": ["{place} Museum", "Museum of Modern Art", "City Museum", "National Gallery"],
        "tourism.attraction": ["Old Town Square", "{place} Cathedral", "Harbour Viewpoint", "Castle {place}"],
        "leisure.park": ["{place} Park", "Central Park", "Botanical Garden", "{surname} Playground"],
        "leisure.sports": ["Fitness24Seven", "Gym {place}", "{place} Swimming Hall", "Sports Centre {place}"],
        "leisure.cinema": ["Finnkino", "Cineworld", "{place} Theatre", "Odeon"],
        "public.post_office": ["Post Office", "Posti", "La Poste", "DHL Service Point"],
        "public.police": ["{place} Police Station"],
        "public.toilets": ["Public Toilet"],
        "public.worship": ["St. John's Church", "{place} Cathedral", "Central Mosque", "Trinity Church"],
        "office": ["{surname} & Partners", "{place} Business Park", "Tech Hub {place}", "{surname} Consulting"],
        "other": ["{place} Shop"],
    ]

    static let surnames = [
        "Smith", "Müller", "Virtanen", "Korhonen", "García", "Rossi", "Dubois", "Johansson", "Nowak", "Silva", "Kowalski",
        "Novak", "Jensen", "Andersen", "Martin", "Bernard", "Schmidt", "Fischer", "Nieminen", "Mäkinen", "Lopez", "Brown",
    ]

    static let streetStems = [
        "Main", "Church", "Park", "Station", "Market", "Mill", "King", "Queen", "Garden", "River", "Lake", "Harbour",
        "Mannerheimin", "Aleksanterin", "Bahnhof", "Haupt", "Victor Hugo", "Mayor", "Roma", "Kungs", "Hamn",
    ]

    static let openingHours = ["Mo-Fr 08:00-20:00; Sa 09:00-18:00", "Mo-Su 07:00-22:00", "24/7", "Mo-Sa 10:00-21:00; Su 12:00-18:00"]
}
