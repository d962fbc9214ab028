import Testing
@testable import EntityStore

@Suite("SortedMap range queries")
struct SortedMapRangeTests {
    /// Keys 0, 3, 6, ... 297: probes hit present keys, gaps between keys and both ends.
    private static func sample(nodeCapacity: Int) -> (SortedMap<Int, Int>, SortedMapModel) {
        var map = SortedMap<Int, Int>(nodeCapacity: nodeCapacity)
        var model = SortedMapModel()
        for key in stride(from: 0, to: 300, by: 3) {
            map.updateValue(-key, forKey: key)
            _ = model.updateValue(-key, forKey: key)
        }
        return (map, model)
    }

    private static func bounds(_ key: Int) -> [SortedMapBound<Int>?] {
        [nil, .included(key), .excluded(key)]
    }

    @Test("every combination of missing, inclusive and exclusive bounds", arguments: [4, 64])
    func everyBoundCombination(nodeCapacity: Int) {
        let (map, model) = Self.sample(nodeCapacity: nodeCapacity)
        let probes = [-10, 0, 1, 3, 4, 150, 151, 296, 297, 298, 400]
        for low in probes {
            for high in probes {
                for lowerBound in Self.bounds(low) {
                    for upperBound in Self.bounds(high) {
                        let range = SortedMapRange(lowerBound: lowerBound, upperBound: upperBound)
                        let expected = model.elements(in: range)
                        #expect(sameElements(map.elements(in: range), expected), "\(range)")
                        #expect(sameElements(map.reversedElements(in: range), expected.reversed()), "\(range)")
                        #expect(map.elements(in: range).underestimatedCount == expected.count)
                        for key in [low - 1, low, low + 1, high - 1, high, high + 1] {
                            var single = SortedMapModel()
                            _ = single.updateValue(0, forKey: key)
                            #expect(range.contains(key) == !single.elements(in: range).isEmpty)
                        }
                    }
                }
            }
        }
    }

    @Test("range expressions convert to the matching bounds")
    func rangeExpressions() {
        let (map, model) = Self.sample(nodeCapacity: 4)
        #expect(sameElements(map.elements(in: SortedMapRange(3..<9)), model.elements.filter { (3..<9).contains($0.key) }))
        #expect(sameElements(map.elements(in: SortedMapRange(3...9)), model.elements.filter { (3...9).contains($0.key) }))
        #expect(sameElements(map.elements(in: SortedMapRange(290...)), model.elements.filter { $0.key >= 290 }))
        #expect(sameElements(map.elements(in: SortedMapRange(...6)), model.elements.filter { $0.key <= 6 }))
        #expect(sameElements(map.elements(in: SortedMapRange(..<6)), model.elements.filter { $0.key < 6 }))
        #expect(sameElements(map.elements(in: .all), model.elements))
        #expect(sameElements(map.reversedElements(), model.elements.reversed()))
    }

    @Test("contains agrees with the bounds")
    func rangeContains() {
        let range = SortedMapRange(lowerBound: .excluded(2), upperBound: .included(5))
        #expect(!range.contains(2))
        #expect(range.contains(3))
        #expect(range.contains(5))
        #expect(!range.contains(6))
        let halfOpen = SortedMapRange(lowerBound: .included(2), upperBound: .excluded(5))
        #expect(halfOpen.contains(2))
        #expect(!halfOpen.contains(5))
        #expect(SortedMapRange<Int>.all.contains(Int.min))
        #expect(SortedMapBound.excluded(7).key == 7)
    }

    @Test("crossed bounds give an empty run")
    func crossedBounds() {
        let (map, _) = Self.sample(nodeCapacity: 4)
        let range = SortedMapRange(lowerBound: .included(200), upperBound: .included(100))
        #expect(Array(map.elements(in: range)).isEmpty)
        #expect(Array(map.reversedElements(in: range)).isEmpty)
        #expect(map.offsets(in: range).isEmpty)
    }

    @Test("top-k reads the largest keys first")
    func topK() {
        let (map, model) = Self.sample(nodeCapacity: 5)
        let top = Array(map.reversedElements().prefix(5))
        #expect(top.map(\.key) == Array(model.keys.suffix(5).reversed()))
    }
}
