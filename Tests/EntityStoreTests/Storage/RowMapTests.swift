import EntityStoreTestSupport
import HashTreeCollections
import Testing
@testable import EntityStore

@Suite("RowMap: sharded flat tables with persistent overlays")
struct RowMapTests {
    /// Random inserts, updates and removals checked against a Dictionary after every step,
    /// with the map's invariants checked after every step too. Copies are held at random
    /// moments (forcing overlays, folds and splits of shared shards) and dropped at
    /// random; every held copy must keep exactly the contents it had when it was taken,
    /// whatever was written after it.
    @Test(arguments: [(1, 4), (2, 4), (3, 16), (4, 64), (5, 1_024)] as [(UInt64, Int)])
    func matchesADictionaryAndKeepsOldVersions(seed: UInt64, shardLoad: Int) {
        var random = SplitMix64(seed: seed)
        var map = RowMap<Int, String>(shardLoad: shardLoad)
        var model: [Int: String] = [:]
        var held: [(map: RowMap<Int, String>, model: [Int: String])] = []
        // The key space grows for 60% of the steps, then the map shrinks: shards split,
        // fill and empty.
        let steps = Soak.pick(1_000, soak: 10_000)
        let growth = steps * 3 / 5
        for step in 0..<steps {
            let space = step < growth ? 40 + step : 40 + growth
            let key = Int(random.next() % UInt64(space))
            switch random.next() % 20 {
            case 0...10:
                let value = "v\(step)"
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case 11...16:
                let removes = step < growth ? 1 : 3
                for offset in 0..<removes {
                    let victim = (key + offset * 97) % space
                    #expect(map.removeValue(forKey: victim) == model.removeValue(forKey: victim))
                }
            case 17, 18:
                held.append((map, model))
                if held.count > 5 { held.remove(at: Int(random.next() % 5)) }
            default:
                if !held.isEmpty { held.removeLast() }
            }
            #expect(map.count == model.count)
            #expect(map[key] == model[key])
            let problems = map.invariantViolations()
            #expect(problems.isEmpty, "step \(step): \(problems.prefix(3))")
            if !problems.isEmpty { return }
            // A held copy stays as it was: spot checks every step, in full now and then.
            if let (old, expected) = held.randomElement(using: &random) {
                let probe = Int(random.next() % UInt64(space))
                #expect(old[probe] == expected[probe])
            }
            if step % 250 == 0 { checkHeld(held) }
        }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
        checkHeld(held)
    }

    /// Every held copy has the contents it was taken with, and is well formed.
    func checkHeld(_ held: [(map: RowMap<Int, String>, model: [Int: String])]) {
        for (old, expected) in held {
            #expect(old.count == expected.count)
            #expect(Dictionary(uniqueKeysWithValues: old.map { ($0.key, $0.value) }) == expected)
            #expect(old.invariantViolations().isEmpty)
        }
    }

    @Test("a bulk load into an empty map lays out its shards once and writes in place")
    func presizedLoad() {
        var map = RowMap<Int, Int>(shardLoad: 64)
        map.reserveCapacity(adding: 1_000)
        #expect(map.shardCount == 16)
        for key in 0..<1_000 { map[key] = key }
        #expect(map.shardCount == 16)
        for index in 0..<map.shardCount { #expect(map.shard(at: index).overlay.isEmpty) }
        #expect(map.invariantViolations().isEmpty)
        // Into a non-empty map, reserving does nothing: shards split as keys come.
        map.reserveCapacity(adding: 100_000)
        #expect(map.shardCount == 16)
        for key in 1_000..<2_000 { map[key] = key }
        #expect(map.shardCount == (2_000 + 63) / 64)
        #expect(map.invariantViolations().isEmpty)
        #expect((0..<2_000).allSatisfy { map[$0] == $0 })
    }

    @Test("a write to a shared map copies one shard's overlay path, never a table")
    func sharedWriteTouchesOneShard() {
        var map = RowMap<Int, Int>(shardLoad: 64)
        for key in 0..<10_000 { map[key] = key }
        let snapshot = map
        map[5] = -5
        map[20_000] = 1
        map.removeValue(forKey: 6)
        var changedShards = Set<Int>()
        for index in 0..<map.shardCount {
            let new = map.shard(at: index)
            let old = snapshot.shard(at: index)
            // No table is copied: a write to a shared shard goes to its overlay.
            #expect(new.table === old.table)
            if !new.overlay.isEmpty { changedShards.insert(index) }
        }
        let touched = Set([5, 20_000, 6].map { RowMap<Int, Int>.shardIndex(hash: $0.hashValue, shards: map.shardCount) })
        #expect(changedShards == touched)
        #expect(map[5] == -5 && map[6] == nil && map[20_000] == 1 && map.count == 10_000)
        #expect(snapshot[5] == 5 && snapshot[6] == 6 && snapshot[20_000] == nil && snapshot.count == 10_000)
        #expect(map.invariantViolations().isEmpty && snapshot.invariantViolations().isEmpty)
    }

    @Test("an overlay past a quarter of its table folds into a new table for that shard alone")
    func foldsOneShard() {
        var map = RowMap<Int, Int>(shardLoad: 256)
        for key in 0..<4_096 { map[key] = key }
        let snapshot = map
        let target = RowMap<Int, Int>.shardIndex(hash: 7.hashValue, shards: map.shardCount)
        let keys = (0..<4_096).filter { RowMap<Int, Int>.shardIndex(hash: $0.hashValue, shards: map.shardCount) == target }
        let threshold = map.shard(at: target).foldThreshold
        for key in keys.prefix(threshold) { map[key] = -key }
        #expect(map.shard(at: target).overlay.count == threshold)
        #expect(map.shard(at: target).table === snapshot.shard(at: target).table)
        map[keys[threshold]] = -keys[threshold]
        // Folded: a table of its own, an empty overlay; every other shard untouched.
        #expect(map.shard(at: target).overlay.isEmpty)
        #expect(map.shard(at: target).table !== snapshot.shard(at: target).table)
        for index in 0..<map.shardCount where index != target {
            #expect(map.shard(at: index).table === snapshot.shard(at: index).table)
        }
        #expect(keys.prefix(threshold + 1).allSatisfy { map[$0] == -$0 && snapshot[$0] == $0 })
        #expect(map.invariantViolations().isEmpty && snapshot.invariantViolations().isEmpty)
    }

    @Test("writes near a fold copy the shared table ahead, so the fold finds the copy made")
    func preparedFolds() {
        var map = RowMap<Int, Int>(shardLoad: 256)
        for key in 0..<4_096 { map[key] = key }
        var snapshot = map
        let target = RowMap<Int, Int>.shardIndex(hash: 7.hashValue, shards: map.shardCount)
        let keys = (0..<4_096).filter { RowMap<Int, Int>.shardIndex(hash: $0.hashValue, shards: map.shardCount) == target }
        let threshold = map.shard(at: target).foldThreshold
        let shared = map.shard(at: target).table
        #expect(map.preparations.pending == 0)
        for (step, key) in keys.prefix(threshold + 1).enumerated() {
            // An older version is held at every step, as an observer holding `previous`.
            snapshot = map
            map[key] = -key
            #expect(map.invariantViolations().isEmpty)
            if step < threshold - threshold / 4 { #expect(map.preparations.pending == 0) }
            if step == threshold - 1 { #expect(map.preparations.pending == 1) }
        }
        // Folded onto the prepared copy, which the preparations no longer hold.
        #expect(map.shard(at: target).overlay.isEmpty)
        #expect(map.shard(at: target).table !== shared)
        #expect(map.preparations.pending == 0)
        #expect(keys.prefix(threshold + 1).allSatisfy { map[$0] == -$0 })
        #expect(keys.prefix(threshold).allSatisfy { snapshot[$0] == -$0 } && snapshot[keys[threshold]] == keys[threshold])
        #expect(snapshot.invariantViolations().isEmpty)
    }

    @Test("a preparation whose table no version holds any more is dropped")
    func abandonedPreparations() {
        let preparations = FoldPreparations<Int, Int>()
        var tables = (0..<4).map { _ in FlatTable<Int, Int>.make(capacity: 64) }
        for (offset, table) in tables.enumerated() {
            for key in 0..<10 { _ = table.updateValue(key, forKey: key + offset * 100, hash: (key + offset * 100).hashValue) }
            preparations.advance(table, by: 16)
        }
        #expect(preparations.pending == 4)
        let kept = tables[0]
        tables.removeAll()
        // Sweeps run with later advances: only the copy of a table still held survives.
        for _ in 0..<4 { preparations.advance(kept, by: 16) }
        #expect(preparations.pending == 1)
        let copy = preparations.take(kept)
        #expect(copy?.count == 10 && copy?.invariantViolations().isEmpty == true)
        #expect((0..<10).allSatisfy { copy?.valuePointer(for: $0, hash: $0.hashValue)?.pointee == $0 })
        #expect(preparations.pending == 0)
    }

    @Test("iteration visits every key once, through tables and overlays")
    func iteration() {
        var map = RowMap<Int, Int>(shardLoad: 8)
        for key in 0..<500 { map[key] = key }
        let snapshot = map
        for key in stride(from: 0, to: 500, by: 3) { map.removeValue(forKey: key) }
        for key in 500..<600 { map[key] = key }
        for key in stride(from: 1, to: 500, by: 3) { map[key] = -key }
        var seen: [Int: Int] = [:]
        for (key, value) in map { #expect(seen.updateValue(value, forKey: key) == nil) }
        var expected: [Int: Int] = [:]
        for key in 0..<600 where !(key < 500 && key % 3 == 0) { expected[key] = key < 500 && key % 3 == 1 ? -key : key }
        #expect(seen == expected)
        #expect(Dictionary(uniqueKeysWithValues: snapshot.map { ($0.key, $0.value) }) == Dictionary(uniqueKeysWithValues: (0..<500).map { ($0, $0) }))
    }
}

@Suite("FlatTable: open addressing with backward-shift removal")
struct FlatTableTests {
    /// Random updates and removals in small tables filled to their maximum load, so runs
    /// are long and wrap around the end; checked against a Dictionary and the table's
    /// invariants after every step.
    @Test(arguments: [8, 13, 64] as [Int])
    func matchesADictionary(capacity: Int) {
        var random = SplitMix64(seed: UInt64(capacity))
        let table = FlatTable<Int, Int>.make(capacity: capacity)
        var model: [Int: Int] = [:]
        for step in 0..<4_000 {
            let key = Int(random.next() % UInt64(capacity * 2))
            if random.next() % 2 == 0 {
                if model[key] != nil || table.hasRoom {
                    #expect(table.updateValue(step, forKey: key, hash: key.hashValue) == model.updateValue(step, forKey: key))
                }
            } else {
                #expect(table.removeValue(forKey: key, hash: key.hashValue) == model.removeValue(forKey: key))
            }
            #expect(table.count == model.count)
            #expect(table.valuePointer(for: key, hash: key.hashValue)?.pointee == model[key])
            let problems = table.invariantViolations()
            #expect(problems.isEmpty, "step \(step): \(problems)")
            if !problems.isEmpty { return }
            if step % 500 == 0 {
                let copy = table.copy()
                let resized = table.resized(capacity: capacity * 3)
                for candidate in 0..<(capacity * 2) {
                    #expect(copy.valuePointer(for: candidate, hash: candidate.hashValue)?.pointee == model[candidate])
                    #expect(resized.valuePointer(for: candidate, hash: candidate.hashValue)?.pointee == model[candidate])
                }
                #expect(copy.invariantViolations().isEmpty && resized.invariantViolations().isEmpty)
            }
        }
        var seen: [Int: Int] = [:]
        table.forEach { key, value in seen[key] = value }
        #expect(seen == model)
    }

    @Test("values with references stay alive while a table holds them and are released with it")
    func referenceValues() {
        final class Token {}
        struct WeakToken { weak var token: Token? }
        var weakTokens: [WeakToken] = []
        do {
            let table = FlatTable<Int, Token>.make(capacity: 64)
            do {
                let tokens = (0..<40).map { _ in Token() }
                weakTokens = tokens.map { WeakToken(token: $0) }
                for (key, token) in tokens.enumerated() { _ = table.updateValue(token, forKey: key, hash: key.hashValue) }
            }
            let copy = table.copy()
            for key in 0..<20 { _ = table.removeValue(forKey: key, hash: key.hashValue) }
            let resized = table.resized(capacity: 128)
            #expect(weakTokens.allSatisfy { $0.token != nil })
            withExtendedLifetime((table, copy, resized)) {}
        }
        #expect(weakTokens.allSatisfy { $0.token == nil })
    }
}
