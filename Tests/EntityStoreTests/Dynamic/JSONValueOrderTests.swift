import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("JSONValue ordering, equality and hashing")
struct JSONValueOrderTests {
    @Test("kinds and numbers sort in the documented order")
    func documentedOrder() {
        let ascending: [JSONValue] = [
            nil, false, true,
            .double(-.infinity), .integer(Int64.min), .double(-1.5), .integer(-1), .double(-1),
            .integer(0), .double(-0.0), .double(0.5), .integer(1), .double(1), .double(1.5),
            .double(9_007_199_254_740_992), .integer(9_007_199_254_740_993),
            .integer(Int64.max), .double(9_223_372_036_854_775_808), .double(.infinity), .double(.nan),
            "", "a", "ab", "b", "é",
            [], [nil], [1], [1, nil], ["a"],
            [:], ["a": 1], ["a": 1, "b": nil], ["a": 2], ["b": 0],
        ]
        for (index, value) in ascending.enumerated() {
            for later in ascending[(index + 1)...] {
                #expect(value < later, "\(value.serialized()) < \(later.serialized())")
                #expect(!(later < value))
                #expect(value != later)
            }
        }
        #expect(ascending.shuffled().sorted() == ascending)
    }

    @Test("the order is a strict total order consistent with ==")
    func orderLaws() {
        var generator = SplitMix64(seed: 99)
        let sample = (0..<120).map { _ in JSONValueSamples.random(using: &generator, depth: 2) }
        for left in sample {
            #expect(!(left < left))
            #expect(left == left)
            for right in sample {
                let relations = [left < right, right < left, left == right].filter { $0 }
                #expect(relations.count == 1, "\(left.serialized()) vs \(right.serialized())")
            }
        }
        for _ in 0..<20_000 {
            let a = sample[Int.random(in: 0..<sample.count, using: &generator)]
            let b = sample[Int.random(in: 0..<sample.count, using: &generator)]
            let c = sample[Int.random(in: 0..<sample.count, using: &generator)]
            if a < b && b < c {
                #expect(a < c)
            }
            if !(b < a) && !(c < b) {
                #expect(!(c < a))
            }
        }
        let sorted = sample.sorted()
        for index in sorted.indices.dropFirst() {
            #expect(!(sorted[index] < sorted[index - 1]))
        }
    }

    @Test("NaN equals NaN, -0.0 equals 0.0, and hashes agree")
    func equalityEdgeCases() {
        #expect(JSONValue.double(.nan) == .double(.nan))
        #expect(Set<JSONValue>([.double(.nan)]).contains(.double(-.nan)))
        #expect(JSONValue.double(-0.0) == .double(0))
        #expect(Set<JSONValue>([.double(-0.0)]).contains(.double(0)))
        #expect(JSONValue.integer(1) != .double(1))
        #expect(JSONValue.bool(true) != .integer(1))
        #expect(JSONValue.object(["a": 1, "b": 2]) == .object(["b": 2, "a": 1]))
        #expect(Set<JSONValue>([["a": 1, "b": [2.5, nil]]]).contains(["b": [2.5, nil], "a": 1]))
        #expect(JSONValue.array([1, 2]) != .array([2, 1]))
    }

    @Test("equal values hash equally across a random sample")
    func hashConsistency() {
        var generator = SplitMix64(seed: 5)
        let sample = (0..<200).map { _ in JSONValueSamples.random(using: &generator, depth: 2) }
        for left in sample {
            for right in sample where left == right {
                #expect(left.hashValue == right.hashValue)
            }
        }
    }

    @Test("JSONValue works as a SortedMap key")
    func asIndexKey() {
        var index = SortedMap<JSONValue, Int>(nodeCapacity: 4)
        let keys: [JSONValue] = ["b", 2, .double(2), nil, [1], true, .double(.nan), ["k": "v"], 1.5]
        for (position, key) in keys.enumerated() {
            index.updateValue(position, forKey: key)
        }
        index._checkInvariants()
        #expect(index.count == keys.count)
        #expect(index[.double(.nan)] == 6)
        #expect(index.removeValue(forKey: .double(.nan)) == 6)
        #expect(Array(index).map(\.key) == [nil, true, 1.5, 2, .double(2), "b", [1], ["k": "v"]])
    }
}
