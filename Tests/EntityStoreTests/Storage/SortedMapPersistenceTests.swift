import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("SortedMap persistence and copy-on-write")
struct SortedMapPersistenceTests {
    private static func build(count: Int, nodeCapacity: Int) -> SortedMap<Int, Int> {
        var map = SortedMap<Int, Int>(nodeCapacity: nodeCapacity)
        for key in 0..<count {
            map.updateValue(key, forKey: key * 2)
        }
        return map
    }

    @Test("a copy is unchanged and valid after the original is mutated heavily")
    func copySurvivesMutation() {
        var original = Self.build(count: 2_000, nodeCapacity: 4)
        let snapshot = original
        let expected = Array(snapshot)
        var generator = SplitMix64(seed: 7)
        for _ in 0..<3_000 {
            let key = Int.random(in: 0..<5_000, using: &generator)
            if Bool.random(using: &generator) {
                original.updateValue(-1, forKey: key)
            } else {
                original.removeValue(forKey: key)
            }
        }
        original._checkInvariants()
        snapshot._checkInvariants()
        #expect(snapshot.count == 2_000)
        #expect(sameElements(snapshot, expected))
        #expect(original != snapshot)
    }

    @Test("mutating a shared map copies only the root-to-leaf path")
    func pathCopying() {
        let base = Self.build(count: 5_000, nodeCapacity: 8)
        let baseNodes = nodeIdentities(base)
        let depth = height(base)
        #expect(depth >= 4)

        var replaced = base
        replaced.updateValue(99, forKey: 2_000)
        #expect(nodeIdentities(replaced).subtracting(baseNodes).count == depth)

        var inserted = base
        inserted.updateValue(1, forKey: 2_001)
        // A path copy plus at most one new node per level from splits, plus a new root.
        #expect(nodeIdentities(inserted).subtracting(baseNodes).count <= 2 * depth + 1)

        var removed = base
        removed.removeValue(forKey: 4_000)
        // A path copy plus the siblings touched by borrowing or merging, one per level.
        #expect(nodeIdentities(removed).subtracting(baseNodes).count <= 2 * depth)

        #expect(base[2_000] == 1_000)
        #expect(base[2_001] == nil)
        #expect(base[4_000] == 2_000)
        #expect(replaced[2_000] == 99)
        #expect(inserted[2_001] == 1)
        #expect(removed[4_000] == nil)
        for map in [base, replaced, inserted, removed] {
            map._checkInvariants()
        }
    }

    @Test("a uniquely held map is mutated in place")
    func uniqueMutationInPlace() {
        var map = Self.build(count: 1_000, nodeCapacity: 8)
        let before = nodeIdentities(map)
        map.updateValue(5, forKey: 500)
        #expect(nodeIdentities(map) == before)
    }

    @Test("removing an absent key from a shared map copies nothing")
    func missDoesNotCopy() {
        let base = Self.build(count: 100, nodeCapacity: 4)
        var copy = base
        #expect(copy.removeValue(forKey: 1) == nil)
        #expect(copy.root === base.root)
    }

    @Test("an iterator keeps the version it started from")
    func iteratorSnapshot() {
        var map = Self.build(count: 200, nodeCapacity: 4)
        var iterator = map.makeIterator()
        #expect(iterator.next()?.key == 0)
        for key in 0..<400 {
            map.removeValue(forKey: key)
        }
        #expect(map.isEmpty)
        var seen = 1
        while let element = iterator.next() {
            #expect(element.key == seen * 2)
            seen += 1
        }
        #expect(seen == 200)
    }

    @Test("a map crosses task boundaries when its elements are Sendable")
    func sendable() async {
        let map = Self.build(count: 300, nodeCapacity: 16)
        let total = await Task.detached { map.reduce(0) { $0 + $1.value } }.value
        #expect(total == (0..<300).reduce(0, +))
    }
}
