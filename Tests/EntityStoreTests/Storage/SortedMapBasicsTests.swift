import Testing
@testable import EntityStore

@Suite("SortedMap basics")
struct SortedMapBasicsTests {
    @Test("an empty map answers every query without trapping")
    func emptyMap() {
        var map = SortedMap<Int, String>()
        map._checkInvariants()
        #expect(map.isEmpty)
        #expect(map.isEmpty && map.count == 0)
        #expect(map[1] == nil)
        #expect(map.first == nil)
        #expect(map.last == nil)
        #expect(map.element(atOffset: 0) == nil)
        #expect(map.offset(of: 1) == nil)
        #expect(map.lowerBoundOffset(1) == 0)
        #expect(map.upperBoundOffset(1) == 0)
        #expect(Array(map).isEmpty)
        #expect(Array(map.elements(in: SortedMapRange(0...10))).isEmpty)
        #expect(Array(map.reversedElements(in: .all)).isEmpty)
        #expect(Array(map.elements(fromOffset: 0)).isEmpty)
        #expect(Array(map.elements(fromOffset: 5)).isEmpty)
        #expect(map.removeValue(forKey: 1) == nil)
        #expect(map == SortedMap<Int, String>(nodeCapacity: 4))
    }

    @Test("insert, replace and remove report the previous value")
    func previousValues() {
        var map = SortedMap<String, Int>()
        #expect(map.updateValue(1, forKey: "b") == nil)
        #expect(map.updateValue(2, forKey: "a") == nil)
        #expect(map.updateValue(3, forKey: "b") == 1)
        #expect(map.count == 2)
        #expect(map.first?.key == "a")
        #expect(map.last?.value == 3)
        #expect(map.removeValue(forKey: "a") == 2)
        #expect(map.removeValue(forKey: "a") == nil)
        #expect(map.removeValue(forKey: "b") == 3)
        #expect(map.isEmpty)
        #expect(map.root == nil)
        map._checkInvariants()
    }

    @Test("removeAll empties the map but not its copies")
    func removeAll() {
        var map = SortedMap<Int, Int>(sortedUniqueElements: (0..<100).map { ($0, $0) })
        let copy = map
        map.removeAll()
        #expect(map.isEmpty)
        #expect(copy.count == 100)
    }

    @Test("the node capacity is at least four")
    func capacityFloor() {
        #expect(SortedMap<Int, Int>(nodeCapacity: 1).nodeCapacity == 4)
        #expect(SortedMap<Int, Int>().nodeCapacity == SortedMap<Int, Int>.defaultNodeCapacity)
    }

    @Test("equality ignores tree shape and compares values")
    func equality() {
        let pairs = (0..<500).map { ($0, $0 * 3) }
        let small = SortedMap<Int, Int>(sortedUniqueElements: pairs, nodeCapacity: 4)
        var large = SortedMap<Int, Int>(nodeCapacity: 64)
        for (key, value) in pairs.reversed() {
            large.updateValue(value, forKey: key)
        }
        #expect(small == large)
        var changed = large
        changed.updateValue(0, forKey: 250)
        #expect(changed != large)
        changed.updateValue(750, forKey: 250)
        #expect(changed == large)
        changed.removeValue(forKey: 0)
        #expect(changed != large)
    }
}
