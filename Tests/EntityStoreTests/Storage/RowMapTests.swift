import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("RowMap: flat table with a persistent overlay")
struct RowMapTests {
    /// Random updates and removals, with older copies held at random moments (forcing the
    /// overlay, tombstones and compactions), checked against a Dictionary after every step;
    /// every held copy must keep exactly the contents it had when it was taken.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func matchesADictionaryAndKeepsOldVersions(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var map = RowMap<Int, String>()
        var model: [Int: String] = [:]
        var held: [(map: RowMap<Int, String>, model: [Int: String])] = []
        for step in 0..<6_000 {
            let key = Int(random.next() % 700)
            switch random.next() % 10 {
            case 0...5:
                let value = "v\(step)"
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case 6...8:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            default:
                held.append((map, model))
                if held.count > 6 { held.removeFirst() }
            }
            #expect(map.count == model.count)
            #expect(map[key] == model[key])
        }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
        for (old, expected) in held {
            #expect(old.count == expected.count)
            #expect(Dictionary(uniqueKeysWithValues: old.map { ($0.key, $0.value) }) == expected)
        }
    }

    @Test("writes to a shared map go to the overlay and are folded in once it grows")
    func overlayAndCompaction() {
        var map = RowMap<Int, Int>()
        for key in 0..<10_000 { map[key] = key }
        #expect(map.overlay.isEmpty)
        let snapshot = map
        map[5] = -5
        map[20_000] = 1
        map.removeValue(forKey: 6)
        #expect(map.overlay.count == 3)
        #expect(map[5] == -5 && map[6] == nil && map[20_000] == 1 && map.count == 10_000)
        #expect(snapshot[5] == 5 && snapshot[6] == 6 && snapshot[20_000] == nil && snapshot.count == 10_000)
        for key in 0..<1_000 { map[key] = key * 2 }
        #expect(map.overlay.count < 1_000)
        #expect(map[999] == 1_998 && map[6] == 12 && map[20_000] == 1)
        #expect(snapshot[999] == 999)
    }
}
