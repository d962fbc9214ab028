import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// Commits that touch many rows and many groups at once: the live engines keep what one
/// commit touched in small arrays searched linearly and index them once they hold more
/// than eight entries, so both sides of that threshold must give the re-run's answer.
@Suite struct LiveLargeCommitTests {
    /// A `SmallMap` answers as a dictionary before and after it builds its index, with
    /// values overwritten on either side.
    @Test func smallMapAgreesWithADictionary() {
        var map = SmallMap<Int, String>()
        var model: [Int: String] = [:]
        var random = SplitMix64(seed: 11)
        for step in 0..<200 {
            let key = Int.random(in: 0..<40, using: &random)
            map.set("v\(step)", for: key)
            model[key] = "v\(step)"
            #expect(map.count == model.count)
            for probe in 0..<42 { #expect(map[probe] == model[probe], "key \(probe) after step \(step)") }
        }
        #expect(Set(map.keys) == Set(model.keys) && map.index != nil)
    }

    /// Batches that move rows across 1 to 30 groups, remove and insert rows, and update
    /// rows within their group: every group-by and row query equals its re-run, and each
    /// group-by diff names exactly the groups whose aggregates changed.
    @Test(arguments: Soak.seeds(1...1, soak: 1...30))
    func batchesAcrossManyGroupsAgreeWithAReRun(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 104_729)
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 0..<300 { try tx[items].insert(Item(id: id, group: id % 30, score: id % 17, tag: id % 5)) }
        }
        let groups = fixture.groupQueries.map { entry in
            (name: entry.name, query: entry.query, key: entry.key,
             live: store.live(entry.query, groupedBy: entry.key, aggregating: \.score),
             log: UpdateLog<GroupValues<Int, Int>, GroupDiff<Int, Int>>())
        }
        let groupTokens = groups.map { entry in entry.live.observe { entry.log.append($0) } }
        let rows = fixture.queries.map { (name: $0.name, query: $0.query, live: store.live($0.query)) }
        var nextID = 1_000
        for round in 0..<25 {
            var before: [[Int: GroupAggregate<Int>]] = []
            for entry in groups { before.append(groupReference(entry.query, key: entry.key as KeyPath<Item, Int>, in: store.state)) }
            let touchedGroups = Int.random(in: 1...30, using: &random)
            try store.write { tx in
                let ids = Array(tx.current[items].ids)
                for _ in 0..<Int.random(in: 1...40, using: &random) {
                    guard let id = ids.randomElement(using: &random), tx.current[items].find(id) != nil else { continue }
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: _ = try tx[items].remove(id)
                    case 1: _ = try tx[items].update(id) { $0.score = Int.random(in: 0..<50, using: &random) }
                    default:
                        _ = try tx[items].update(id) {
                            $0.group = Int.random(in: 0..<touchedGroups, using: &random)
                            $0.tag = Int.random(in: 0..<12, using: &random)
                        }
                    }
                }
                for _ in 0..<Int.random(in: 0...12, using: &random) {
                    nextID += 1
                    try tx[items].insert(Item(
                        id: nextID, group: Int.random(in: 0..<30, using: &random), score: Int.random(in: 0..<50, using: &random),
                        tag: Int.random(in: 0..<12, using: &random)))
                }
            }
            let state = store.state
            var rerun = Rerun(state)
            for (index, entry) in groups.enumerated() {
                let expected = rerun.groups(entry.query, key: entry.key as KeyPath<Item, Int>)
                #expect(entry.live.value.dictionary == expected, "\(entry.name), round \(round)")
                let changedKeys = Set(expected.keys).union(before[index].keys).filter { expected[$0] != before[index][$0] }
                let delivered = entry.log.take()
                #expect(Set(delivered.flatMap { $0.diff.changes.map(\.key) }) == changedKeys, "\(entry.name) diff, round \(round)")
                for change in delivered.flatMap(\.diff.changes) {
                    #expect(change.old == before[index][change.key] && change.new == expected[change.key], "\(entry.name) \(change.key)")
                }
            }
            for entry in rows {
                #expect(Array(entry.live.value) == rerun(entry.query), "\(entry.name), round \(round)")
            }
        }
        withExtendedLifetime((groupTokens, rows)) {}
    }
}
