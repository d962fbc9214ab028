import EntityStoreTestSupport
import Testing
@testable import EntityStore

private struct Pair {
    var left: Int
    var right: Inner
}

private struct Inner {
    var value: Int
}

@Suite("Query internals")
struct QueryInternalsTests {
    /// Reading values by offset visits exactly the elements of the offset range, in key
    /// order, across leaves of deep trees, and stops when the body says so.
    @Test(arguments: Soak.seeds([61], soak: 61...90))
    func forEachValueReadsTheOffsetRange(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var map = SortedMap<Int, Int>(nodeCapacity: 4)
        for _ in 0..<400 {
            let key = Int.random(in: 0..<1_000, using: &random)
            map.updateValue(key * 10, forKey: key)
        }
        for _ in 0..<40 { map.removeValue(forKey: Int.random(in: 0..<1_000, using: &random)) }
        let all = map.map { $0.value }
        for _ in 0..<200 {
            let start = Int.random(in: 0...all.count, using: &random)
            let end = Int.random(in: start...all.count, using: &random)
            var seen: [Int] = []
            map.forEachValue(at: start..<end) { value in
                seen.append(value)
                return true
            }
            #expect(seen == Array(all[start..<end]))
            let stop = Int.random(in: 0...5, using: &random)
            var taken: [Int] = []
            map.forEachValue(at: start..<end) { value in
                taken.append(value)
                return taken.count < stop
            }
            #expect(taken == Array(all[start..<end].prefix(Swift.max(1, stop))) || (start == end && taken.isEmpty))
        }
        var none = 0
        SortedMap<Int, Int>().forEachValue(at: 0..<3) { _ in
            none += 1
            return true
        }
        #expect(none == 0)
    }

    /// A declared key path matches equal key path objects (remembering the last one by
    /// identity) and never a different path.
    @Test func declaredKeyPathsMatchEqualObjects() {
        let declared = KeyPathKey(declaring: \Pair.right.value)
        let composed: AnyKeyPath = (\Pair.right).appending(path: \Inner.value)
        let other: AnyKeyPath = (\Pair.right).appending(path: \Inner.value)
        #expect(composed !== other && composed !== declared.keyPath)
        for _ in 0..<3 {
            #expect(declared.matches(composed))
            #expect(declared.matches(other))
            #expect(!declared.matches(\Pair.left))
            #expect(!declared.matches(\Pair.right))
        }
        #expect(declared.matches(declared.keyPath))
        // A key without memory compares by value.
        #expect(KeyPathKey(keyPath: \Pair.left).matches((\Pair.self).appending(path: \Pair.left)))
    }
}
