import StoreCore
import Testing
@testable import EntityStore

@Suite struct LiveGroupTests {
    /// The minimum and maximum stay right when the extreme row leaves; an emptied group
    /// disappears; the diff names exactly the changed groups.
    @Test func extremesFollowTheRowsThatLeave() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        try store.write { tx in
            try tx[items].insert(contentsOf: [
                Item(id: 1, group: 0, score: 5, tag: 0), Item(id: 2, group: 0, score: 9, tag: 0),
                Item(id: 3, group: 0, score: 1, tag: 0), Item(id: 4, group: 1, score: 7, tag: 0),
            ])
        }
        let groups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        #expect(groups.value[0] == GroupAggregate(count: 3, sum: 15, min: 1, max: 9))
        #expect(groups.value[0]?.average == 5)
        let log = UpdateLog<GroupValues<Int, Int>, GroupDiff<Int, Int>>()
        let token = groups.observe { log.append($0) }
        try store.write { tx in _ = try tx[items].remove(2) }
        #expect(groups.value[0] == GroupAggregate(count: 2, sum: 6, min: 1, max: 5))
        try store.write { tx in _ = try tx[items].update(3) { $0.score = 6 } }
        #expect(groups.value[0] == GroupAggregate(count: 2, sum: 11, min: 5, max: 6))
        try store.write { tx in _ = try tx[items].update(4) { $0.group = 0 } }
        #expect(groups.value[1] == nil && groups.value.count == 1)
        let last = try #require(log.take().last)
        #expect(Set(last.diff.changes.map(\.key)) == [0, 1])
        #expect(last.diff.changes.first { $0.key == 1 }?.new == nil)
        // A commit that leaves every aggregate as it was delivers nothing.
        try store.write { tx in _ = try tx[items].update(4) { $0.tag = 3 } }
        #expect(log.take().isEmpty)
        _ = token
    }

    /// Rows sharing the extreme value are counted, not collapsed: the minimum stays until
    /// the last row holding it leaves, and a value re-entering counts again.
    @Test func equalValuesLeaveOneAtATime() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        try store.write { tx in
            try tx[items].insert(contentsOf: (1...4).map { Item(id: $0, group: 0, score: $0 <= 3 ? 2 : 8, tag: 0) })
        }
        let groups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        for id in 1...2 {
            try store.write { tx in _ = try tx[items].remove(id) }
            #expect(groups.value[0]?.min == 2)
        }
        try store.write { tx in _ = try tx[items].update(3) { $0.score = 9 } }
        #expect(groups.value[0] == GroupAggregate(count: 2, sum: 17, min: 8, max: 9))
        try store.write { tx in
            try tx[items].insert(Item(id: 5, group: 0, score: 8, tag: 0))
            _ = try tx[items].remove(4)
        }
        #expect(groups.value[0] == GroupAggregate(count: 2, sum: 17, min: 8, max: 9))
        try store.write { tx in _ = try tx[items].remove(5) }
        #expect(groups.value[0] == GroupAggregate(count: 1, sum: 9, min: 9, max: 9))
        #expect(groups.value.dictionary == store.state[items].query().aggregates(groupedBy: \.group, of: \.score))
    }

    /// Sums wrap instead of trapping, and are exact again once the true sum fits.
    @Test func sumsNeverTrap() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        let groups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        try store.write { tx in
            try tx[items].insert(Item(id: 1, group: 0, score: .max, tag: 0))
            try tx[items].insert(Item(id: 2, group: 0, score: .max, tag: 0))
        }
        #expect(groups.value[0]?.count == 2)
        try store.write { tx in _ = try tx[items].remove(2) }
        #expect(groups.value[0]?.sum == .max)
    }
}
