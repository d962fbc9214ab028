import Testing
@testable import EntityStore

@Suite("SortedMap bulk build")
struct SortedMapBulkBuildTests {
    @Test("bulk build equals incremental build", arguments: [0, 1, 3, 4, 5, 8, 9, 63, 64, 65, 1_000, 4_097])
    func matchesIncremental(count: Int) {
        for nodeCapacity in [4, 5, 64] {
            let pairs = (0..<count).map { ($0 * 5, $0) }
            let bulk = SortedMap<Int, Int>(sortedUniqueElements: pairs, nodeCapacity: nodeCapacity)
            var incremental = SortedMap<Int, Int>(nodeCapacity: nodeCapacity)
            for (key, value) in pairs {
                incremental.updateValue(value, forKey: key)
            }
            bulk._checkInvariants()
            #expect(bulk.count == count)
            #expect(bulk == incremental)
            #expect(sameElements(bulk, pairs.map { (key: $0.0, value: $0.1) }))
            if count > 0 {
                #expect(bulk.offset(of: (count - 1) * 5) == count - 1)
            }
        }
    }

    @Test("a bulk-built map keeps working under mutation")
    func mutateAfterBulkBuild() {
        var map = SortedMap<Int, Int>(sortedUniqueElements: (0..<1_000).map { ($0, $0) }, nodeCapacity: 6)
        for key in stride(from: 0, to: 1_000, by: 2) {
            map.removeValue(forKey: key)
            map._checkInvariants()
        }
        for key in 1_000..<1_200 {
            map.updateValue(key, forKey: key)
        }
        map._checkInvariants()
        #expect(map.count == 700)
        #expect(Array(map.prefix(3)).map(\.key) == [1, 3, 5])
    }

    @Test("unsorted or repeated input still builds a correct map; the last value wins")
    func unsortedInputFallsBack() {
        let pairs = [(5, "a"), (1, "b"), (5, "c"), (3, "d")]
        let map = SortedMap<Int, String>(sortedUniqueElements: pairs, nodeCapacity: 4)
        map._checkInvariants()
        #expect(map.count == 3)
        #expect(Array(map).map(\.key) == [1, 3, 5])
        #expect(map[5] == "c")
    }
}
