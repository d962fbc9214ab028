import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// A reading of a sensor, for floating-point group-bys.
struct Reading: Entity {
    var id: Int
    var sensor: Int
    var value: Double
}

@Suite struct LiveEngineTests {
    /// Conditions compose: every equality and range applies, whichever comes first (an
    /// equality becomes the source, the rest filter). Checked against a plain filter.
    @Test func everyConditionOfALiveQueryApplies() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 0..<60 { try tx[items].insert(Item(id: id, group: id % 3, score: id * 7 % 50, tag: id % 4)) }
        }
        let cases: [(LiveQuery<Item>, (Item) -> Bool)] = [
            (LiveQuery(items).where(\.group, equals: 1).where(\.score, in: 10...40), { $0.group == 1 && (10...40).contains($0.score) }),
            (LiveQuery(items).where(\.score, in: 10...40).where(\.group, equals: 1), { $0.group == 1 && (10...40).contains($0.score) }),
            (LiveQuery(items).where(\.group, equals: 1).where(\.tag, equals: 2), { $0.group == 1 && $0.tag == 2 }),
            (LiveQuery(items).where(\.score, in: 10...).where(\.score, in: ..<30), { (10..<30).contains($0.score) }),
            (LiveQuery(items).where(\.tag, in: 1...2).where(\.group, equals: 0).sorted(by: \.score).limit(3),
             { (1...2).contains($0.tag) && $0.group == 0 }),
        ]
        let lives = cases.map { (live: store.live($0.0), query: $0.0, matches: $0.1) }
        func check(_ step: String) {
            let all = Array(store.state[items])
            for (position, entry) in lives.enumerated() {
                var expected = all.filter(entry.matches)
                if entry.query.limitCount != nil {
                    expected = Array(expected.enumerated().sorted { ($0.element.score, $0.offset) < ($1.element.score, $1.offset) }.map(\.element).prefix(3))
                }
                #expect(Array(entry.live.value) == expected, "\(step): case \(position)")
            }
        }
        check("initial")
        var random = SplitMix64(seed: 7)
        for step in 0..<100 {
            try store.write { tx in
                let id = Int.random(in: 0..<80, using: &random)
                try tx[items].upsert(Item(id: id, group: Int.random(in: 0..<3, using: &random),
                                          score: Int.random(in: 0..<50, using: &random), tag: Int.random(in: 0..<4, using: &random)))
                if Bool.random(using: &random) { _ = try tx[items].remove(Int.random(in: 0..<80, using: &random)) }
            }
            check("step \(step)")
        }
    }

    /// A delivery reaches an observer while its token is active: a suspended one skips
    /// commits until resumed, a cancelled or released one gets nothing more.
    @Test func observerTokensControlDelivery() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        let live = store.live(LiveQuery(items))
        let (keptLog, suspendedLog, releasedLog) = (
            UpdateLog<LiveRows<Item>, LiveDiff<Item>>(), UpdateLog<LiveRows<Item>, LiveDiff<Item>>(), UpdateLog<LiveRows<Item>, LiveDiff<Item>>()
        )
        let kept = live.observe { keptLog.append($0) }
        let suspended = live.observe { suspendedLog.append($0) }
        var released: Observation? = live.observe { releasedLog.append($0) }
        suspended.suspend()
        func insert(_ id: Int) throws { try store.write { tx in try tx[items].insert(Item(id: id, group: 0, score: id, tag: 0)) } }
        try insert(1)
        #expect(keptLog.take().count == 1 && suspendedLog.take().isEmpty && releasedLog.take().count == 1)
        released = nil
        try insert(2)
        #expect(keptLog.take().count == 1 && releasedLog.take().isEmpty && released == nil)
        suspended.resume()
        try insert(3)
        #expect(suspendedLog.take().map { $0.value.count } == [3] && keptLog.take().count == 1)
        kept.cancel()
        try insert(4)
        #expect(keptLog.take().isEmpty && suspendedLog.take().count == 1)
    }

    /// An equality alone on a grouped index reads its rows from the index's own group,
    /// before and after commits, instead of copying them; with a filter, a limit or a
    /// sort, or on a field without a grouped index, the query keeps rows of its own.
    @Test func anIndexedEqualitySharesTheIndexGroup() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        try store.write { tx in try tx[items].insert(contentsOf: (0..<20).map { Item(id: $0, group: $0 % 4, score: $0, tag: $0 % 3) }) }
        let live = store.live(LiveQuery(items).where(\.group, equals: 1))
        func indexGroup() throws -> SortedMap<UInt64, Int>? {
            let state = store.state
            let storage = try #require(state.storage(named: items.name, as: Item.self))
            let reader = try #require(storage.groupReader(1, for: \Item.group))
            return reader(storage)
        }
        #expect(try (live.value.storage as? IndexedGroupRows<Item>)?.group.root === indexGroup()?.root)
        try store.write { tx in
            _ = try tx[items].update(5) { $0.score = 99 }
            _ = try tx[items].update(2) { $0.group = 1 }
        }
        #expect(try (live.value.storage as? IndexedGroupRows<Item>)?.group.root === indexGroup()?.root)
        #expect(Array(live.value) == store.state[items].filter(\.group, equals: 1))
        #expect(live.value.offset(of: 2) == 1 && live.value.row(id: 5)?.score == 99 && live.value.row(id: 4) == nil)
        for query in [
            LiveQuery(items).where(\.group, equals: 1).limit(3), LiveQuery(items).where(\.group, equals: 1).filter { $0.tag == 0 },
            LiveQuery(items).where(\.group, equals: 1).sorted(by: \.score), LiveQuery(items).where(\.tag, equals: 1),
        ] {
            #expect(!(store.live(query).value.storage is IndexedGroupRows<Item>))
        }
    }

    /// A top-k of a range sorted by the same indexed field refills from the index inside
    /// the range, in both directions, as members leave.
    @Test func aRangeTopKRefillsFromTheIndexWithinTheRange() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 0..<200 { try tx[items].insert(Item(id: id, group: 0, score: id % 100, tag: 0)) }
        }
        let ascending = store.live(LiveQuery(items).where(\.score, in: 20..<60).sorted(by: \.score).limit(5))
        let descending = store.live(LiveQuery(items).where(\.score, in: 20..<60).sorted(by: \.score, descending: true).limit(5))
        func expected(descending: Bool) -> [Item] {
            let rows = Array(store.state[items]).filter { (20..<60).contains($0.score) }
            let sorted = rows.enumerated().sorted { a, b in
                if a.element.score != b.element.score {
                    return descending ? a.element.score > b.element.score : a.element.score < b.element.score
                }
                return a.offset < b.offset
            }
            return Array(sorted.prefix(5).map(\.element))
        }
        #expect(Array(ascending.value) == expected(descending: false))
        #expect(Array(descending.value) == expected(descending: true))
        // Remove the window's members again and again: each time the window refills.
        for _ in 0..<30 {
            let leaving = [ascending.value.first?.id, descending.value.first?.id].compactMap { $0 }
            try store.write { tx in for id in Set(leaving) { _ = try tx[items].remove(id) } }
            #expect(Array(ascending.value) == expected(descending: false))
            #expect(Array(descending.value) == expected(descending: true))
        }
        // Rows outside the range never enter.
        try store.write { tx in try tx[items].insert(Item(id: 1000, group: 0, score: 60, tag: 0)) }
        #expect(!ascending.value.contains { $0.id == 1000 } && !descending.value.contains { $0.id == 1000 })
    }

    /// Floating-point sums stay right as rows leave: a large value leaving does not take
    /// the small ones' contribution with it, and an infinity or a NaN that leaves does not
    /// stay in the sum.
    @Test func floatingPointSumsRecoverAsRowsLeave() throws {
        let readings = Table<Reading>("readings")
        let store = try EntityStore { readings }
        let groups = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.value)
        try store.write { tx in
            try tx[readings].insert(Reading(id: 1, sensor: 0, value: 1e16))
            try tx[readings].insert(Reading(id: 2, sensor: 0, value: 1.0))
        }
        try store.write { tx in _ = try tx[readings].remove(1) }
        #expect(groups.value[0]?.sum == 1.0)
        try store.write { tx in try tx[readings].insert(Reading(id: 3, sensor: 0, value: .infinity)) }
        #expect(groups.value[0]?.sum == .infinity)
        try store.write { tx in try tx[readings].insert(Reading(id: 4, sensor: 0, value: -.infinity)) }
        #expect(groups.value[0]?.sum.isNaN == true)
        try store.write { tx in
            _ = try tx[readings].remove(3)
            _ = try tx[readings].remove(4)
        }
        #expect(groups.value[0]?.sum == 1.0)
        try store.write { tx in try tx[readings].insert(Reading(id: 5, sensor: 0, value: .nan)) }
        #expect(groups.value[0]?.sum.isNaN == true)
        #expect(groups.value[0]?.count == 2)
        try store.write { tx in _ = try tx[readings].remove(5) }
        #expect(groups.value[0]?.sum == 1.0)
        #expect(groups.value[0].map { $0.min == 1.0 && $0.max == 1.0 } == true)
    }

    /// Random inserts, updates and removes of floating-point values: each group's live
    /// sum stays within rounding of the sum re-run from scratch.
    @Test(arguments: Soak.seeds([1], soak: 1...30))
    func floatingPointSumsFollowRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let readings = Table<Reading>("readings")
        let store = try EntityStore { readings }
        let groups = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.value)
        for step in 0..<300 {
            try store.write { tx in
                let id = Int.random(in: 0..<40, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    _ = try tx[readings].remove(id)
                } else {
                    let magnitude = [1e-3, 1.0, 1e6, 1e15][Int.random(in: 0..<4, using: &random)]
                    try tx[readings].upsert(Reading(id: id, sensor: Int.random(in: 0..<3, using: &random),
                                                    value: Double.random(in: -1...1, using: &random) * magnitude))
                }
            }
            var sums: [Int: (sum: Double, magnitude: Double)] = [:]
            for reading in store.state[readings] {
                sums[reading.sensor, default: (0, 0)].sum += reading.value
                sums[reading.sensor, default: (0, 0)].magnitude += abs(reading.value)
            }
            #expect(groups.value.count == sums.count, "seed \(seed) step \(step)")
            for (sensor, expected) in sums {
                let live = groups.value[sensor]?.sum ?? .nan
                #expect(abs(live - expected.sum) <= 1e-12 * expected.magnitude, "seed \(seed) step \(step): sensor \(sensor)")
            }
        }
    }

    /// A raw core commit (an undo to an earlier state) makes a live join re-read its
    /// referenced entities, not only its rows.
    @Test func aJoinRereadsItsReferencesAfterARawCommit() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items, owners = fixture.owners
        try store.write { tx in
            try tx[owners].insert(Owner(id: 1, name: "before"))
            try tx[items].insert(Item(id: 1, group: 1, score: 0, tag: 0))
        }
        let earlier = store.state
        let joined = store.live(LiveQuery(items), joining: \.group, to: owners)
        try store.write { tx in _ = try tx[owners].update(1) { $0.name = "after" } }
        #expect(joined.value.referenced(1)?.name == "after")
        try store.core.commit("undo") { (state: inout EntityState) in state = earlier }
        #expect(joined.value.referenced(1)?.name == "before")
        #expect(joined.value[0].referenced?.name == "before")
    }

    /// Live and derived queries follow a raw core commit back to an earlier state (its
    /// revision is lower than theirs; they order deliveries by store version).
    @Test func queriesFollowAnUndoToAnEarlierState() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in try tx[items].insert(Item(id: 1, group: 1, score: 5, tag: 0)) }
        let earlier = store.state
        let rows = store.live(LiveQuery(items).where(\.group, equals: 1))
        let top = store.live(LiveQuery(items).sorted(by: \.score).limit(1))
        let byID = store.derived(items, id: 1)
        let groups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        try store.write { tx in
            _ = try tx[items].update(1) { $0.score = 9 }
            try tx[items].insert(Item(id: 2, group: 1, score: 1, tag: 0))
        }
        #expect(rows.value.map(\.id) == [1, 2] && top.value.map(\.id) == [2] && byID.value?.score == 9)
        try store.core.commit("undo") { (state: inout EntityState) in state = earlier }
        #expect(rows.value.map(\.id) == [1])
        #expect(top.value.map(\.id) == [1])
        #expect(byID.value?.score == 5)
        #expect(groups.value[1] == GroupAggregate(count: 1, sum: 5, min: 5, max: 5))
        // And onwards from there.
        try store.write { tx in try tx[items].insert(Item(id: 3, group: 1, score: 0, tag: 0)) }
        #expect(rows.value.map(\.id) == [1, 3] && top.value.map(\.id) == [3])
    }

    /// `updates()` starts with the current value (its diff inserts every row), then
    /// delivers each change in commit order, and ends when the live query is released.
    @Test func updatesStreamTheValueThenEachChange() async throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in try tx[items].insert(Item(id: 1, group: 1, score: 1, tag: 0)) }
        var live: LiveList<Item>? = store.live(LiveQuery(items).where(\.group, equals: 1))
        guard let stream = live?.updates() else { return }
        try store.write { tx in try tx[items].insert(Item(id: 2, group: 1, score: 2, tag: 0)) }
        try store.write { tx in try tx[items].insert(Item(id: 3, group: 2, score: 3, tag: 0)) }
        try store.write { tx in _ = try tx[items].remove(1) }
        live = nil
        var received: [LiveUpdate<LiveRows<Item>, LiveDiff<Item>>] = []
        for await update in stream { received.append(update) }
        #expect(received.map { $0.value.map(\.id) } == [[1], [1, 2], [2]])
        #expect(received.first?.diff.inserted.map(\.entity.id) == [1])
        #expect(received.dropFirst().first?.diff.inserted.map(\.offset) == [1])
        #expect(received.last?.diff.removed.map(\.id) == [1])
        #expect(received.map(\.revision) == received.map(\.revision).sorted())
    }
}
