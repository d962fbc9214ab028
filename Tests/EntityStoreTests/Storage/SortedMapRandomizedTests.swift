import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("SortedMap against a sorted-array model")
struct SortedMapRandomizedTests {
    @Test("random inserts, replaces, removes and queries agree with the model", arguments: [4, 5, 7, 64])
    func randomOperations(nodeCapacity: Int) throws {
        var generator = SplitMix64(seed: 0x5EED_0000 + UInt64(nodeCapacity))
        var map = SortedMap<Int, Int>(nodeCapacity: nodeCapacity)
        var model = SortedMapModel()
        let keySpace = 0..<500
        let steps = Soak.pick(1_000, soak: 10_000)
        for step in 0..<steps {
            let key = Int.random(in: keySpace, using: &generator)
            // Phases bias toward growth, then shrinkage, so the tree both splits and merges.
            let insertShare = (step / (steps / 4)) % 2 == 0 ? 70 : 30
            let roll = Int.random(in: 0..<100, using: &generator)
            if roll < insertShare {
                let value = Int.random(in: 0..<1_000_000, using: &generator)
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            } else {
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            }
            map._checkInvariants()
            #expect(map.count == model.elements.count)
            #expect(map[key] == model[key])

            let probe = Int.random(in: -5..<(keySpace.upperBound + 5), using: &generator)
            let (found, index) = model.index(of: probe)
            #expect(map.offset(of: probe) == (found ? index : nil))
            #expect(map.lowerBoundOffset(probe) == index)
            #expect(map.upperBoundOffset(probe) == index + (found ? 1 : 0))
            #expect(map.contains(probe) == found)

            if !model.elements.isEmpty {
                let offset = Int.random(in: 0..<model.elements.count, using: &generator)
                let element = try #require(map.element(atOffset: offset))
                #expect(element.key == model.elements[offset].key)
                #expect(element.value == model.elements[offset].value)
            }

            // Narrow ranges keep each step cheap; the full walk is checked periodically.
            let range = SortedMapRange(probe...(probe + Int.random(in: 0..<40, using: &generator)))
            let expected = model.elements(in: range)
            #expect(sameElements(map.elements(in: range), expected))
            #expect(sameElements(map.reversedElements(in: range), expected.reversed()))

            if step % 250 == 0 {
                #expect(sameElements(map, model.elements))
                #expect(map.first?.key == model.elements.first?.key)
                #expect(map.last?.key == model.elements.last?.key)
            }
        }
        #expect(sameElements(map, model.elements))
    }

    @Test("paging from every offset returns the model's suffix")
    func paging() {
        var generator = SplitMix64(seed: 42)
        var map = SortedMap<Int, Int>(nodeCapacity: 4)
        var model = SortedMapModel()
        for _ in 0..<300 {
            let key = Int.random(in: 0..<1_000, using: &generator)
            map.updateValue(key * 2, forKey: key)
            _ = model.updateValue(key * 2, forKey: key)
        }
        for offset in -2...(model.elements.count + 2) {
            let expected = Array(model.elements[Swift.min(Swift.max(0, offset), model.elements.count)...])
            #expect(sameElements(map.elements(fromOffset: offset).prefix(7), expected.prefix(7)))
            #expect(map.elements(fromOffset: offset).underestimatedCount == expected.count)
        }
        #expect(sameElements(map.elements(fromOffset: 0), model.elements))
        #expect(map.element(atOffset: -1) == nil)
        #expect(map.element(atOffset: model.elements.count) == nil)
    }
}
