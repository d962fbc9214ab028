import EntityStoreTestSupport
@testable import EntityStore

/// Random JSON values for property tests, with the edge cases ordering cares about.
enum JSONValueSamples {
    static let edgeDoubles: [Double] = [
        0, -0.0, 1, -1, 1.5, 0.1, 2, 1e300, -1e300, 9_007_199_254_740_992, 9_223_372_036_854_775_808,
        -9_223_372_036_854_775_808, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
    ]
    static let edgeIntegers: [Int64] = [0, 1, -1, 2, Int64.max, Int64.min, 9_007_199_254_740_993]
    static let strings = ["", "a", "b", "ab", "é", "e\u{301}", "😀", "Z", "\n"]

    static func random(using generator: inout SplitMix64, depth: Int, finiteOnly: Bool = false) -> JSONValue {
        let kinds = depth > 0 ? 8 : 6
        switch Int.random(in: 0..<kinds, using: &generator) {
        case 0:
            return .null
        case 1:
            return .bool(Bool.random(using: &generator))
        case 2:
            return Bool.random(using: &generator)
                ? .integer(edgeIntegers[Int.random(in: 0..<edgeIntegers.count, using: &generator)])
                : .integer(Int64.random(in: -3...3, using: &generator))
        case 3:
            if !finiteOnly, Int.random(in: 0..<8, using: &generator) == 0 {
                return .double(.nan)
            }
            return Bool.random(using: &generator)
                ? .double(edgeDoubles[Int.random(in: 0..<edgeDoubles.count, using: &generator)])
                : .double(Double(Int.random(in: -6...6, using: &generator)) / 2)
        case 4, 5:
            return .string(strings[Int.random(in: 0..<strings.count, using: &generator)])
        case 6:
            let count = Int.random(in: 0...3, using: &generator)
            return .array((0..<count).map { _ in random(using: &generator, depth: depth - 1, finiteOnly: finiteOnly) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let key = strings[Int.random(in: 0..<strings.count, using: &generator)]
                members[key] = random(using: &generator, depth: depth - 1, finiteOnly: finiteOnly)
            }
            return .object(members)
        }
    }
}
