import Dispatch
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

@Suite struct LiveDispatchTests {
    /// 1,000 equality queries on distinct keys: each commit wakes exactly the queries of
    /// the keys its changed rows leave or enter.
    @Test func aChangedRowWakesOnlyTheQueriesOfItsOldAndNewKey() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        try store.write { tx in
            for id in 0..<1_000 { try tx[items].insert(Item(id: id, group: id, score: id, tag: 0)) }
        }
        let lives = (0..<1_000).map { store.live(LiveQuery(items).where(\.group, equals: $0)) }
        #expect(store.watchers.watchedKeyCount == 1_000)
        func wakeups() -> [Int: Int] {
            var woken: [Int: Int] = [:]
            for (key, live) in lives.enumerated() where live.wakeups > 0 { woken[key] = live.wakeups }
            return woken
        }
        try store.write { tx in _ = try tx[items].update(5) { $0.group = 7 } }
        #expect(wakeups() == [5: 1, 7: 1])
        #expect(lives[5].value.isEmpty && lives[7].value.map(\.id) == [5, 7])
        try store.write { tx in _ = try tx[items].update(7) { $0.tag = 3 } }  // key unchanged
        #expect(wakeups() == [5: 1, 7: 2])
        try store.write { tx in try tx[items].insert(Item(id: 2_000, group: 9, score: 0, tag: 0)) }
        #expect(wakeups() == [5: 1, 7: 2, 9: 1])
        try store.write { tx in _ = try tx[items].remove(2) }
        #expect(wakeups() == [2: 1, 5: 1, 7: 2, 9: 1])
        try store.write { tx in _ = try tx[items].update(100) { $0.score = -1 } }
        #expect(wakeups() == [2: 1, 5: 1, 7: 2, 9: 1, 100: 1])
        // A key no query watches wakes none.
        try store.write { tx in _ = try tx[items].update(100) { $0.group = 5_000 } }
        #expect(wakeups() == [2: 1, 5: 1, 7: 2, 9: 1, 100: 2])
        // A restore re-evaluates each query once.
        try store.replaceAll(with: store.state)
        #expect(lives.allSatisfy { $0.wakeups >= 1 })
        #expect(lives[3].wakeups == 1 && lives[7].wakeups == 3)
    }

    /// A join of one group wakes for its key and for the referenced entities only; the
    /// referenced IDs follow its rows and leave the registry with it.
    @Test func aJoinWakesOnlyForItsKeyAndItsReferencedEntities() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items, owners = fixture.owners
        try store.write { tx in
            for id in 0..<5 { try tx[owners].insert(Owner(id: id, name: "owner \(id)")) }
            try tx[items].insert(Item(id: 1, group: 1, score: 0, tag: 0))
        }
        // Items of tag 0 reference their group's owner; tag 0 is the equality key.
        do {
            let live = store.live(LiveQuery(items).where(\.tag, equals: 0), joining: \.group, to: owners)
            #expect(live.value.first?.referenced?.name == "owner 1")
            try store.write { tx in _ = try tx[owners].update(3) { $0.name = "not referenced" } }
            #expect(live.wakeups == 0)
            try store.write { tx in _ = try tx[owners].update(1) { $0.name = "renamed" } }
            #expect(live.wakeups == 1 && live.value.first?.referenced?.name == "renamed")
            try store.write { tx in _ = try tx[items].update(1) { $0.group = 3 } }
            #expect(live.wakeups == 2 && live.value.first?.referenced?.name == "not referenced")
            try store.write { tx in _ = try tx[owners].update(1) { $0.name = "no longer referenced" } }
            #expect(live.wakeups == 2)
            try store.write { tx in _ = try tx[owners].remove(3) }
            #expect(live.wakeups == 3 && live.value.first.map { $0.referenced == nil } == true)
            #expect(store.watchers.watchedIDCount == 1)
        }
        #expect(store.watchers.watchedIDCount == 0 && store.watchers.watchedKeyCount == 0)
    }

    /// Derived equality queries are filed by key too, and unregistered when released.
    @Test func derivedEqualityQueriesAreFiledByKeyAndReleased() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        var queries: [DerivedQuery<LiveRows<Item>>]? = (0..<100).map { store.derived(items, where: \.group, equals: $0) }
        try store.write { tx in try tx[items].insert(Item(id: 1, group: 3, score: 0, tag: 0)) }
        #expect(queries?.map(\.recomputations).reduce(0, +) == 1)
        #expect(queries?[3].value.map(\.id) == [1])
        queries = nil
        #expect(store.watchers.watchedKeyCount == 0)
    }

    /// Threads create live queries of every kind (rows, group-bys, joins) while another
    /// commits to both tables: every query misses no commit and ends equal to its query
    /// re-run on the final state.
    @Test func liveQueriesCreatedDuringCommitsEndEqualToTheFinalState() async throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        let made = Lock<[(name: String, query: LiveQuery<Item>, live: LiveList<Item>)]>([])
        let madeGroups = Lock<[(query: LiveQuery<Item>, key: any KeyPath<Item, Int> & Sendable, live: LiveGroups<Int, Int>)]>([])
        let madeJoins = Lock<[(query: LiveQuery<Item>, live: LiveJoin<Item, Owner>)]>([])
        let committing = Lock(true)
        let threads = DispatchGroup()
        threads.enter()
        Thread.detachNewThread {
            for step in 0..<Soak.pick(120, soak: 1_200) {
                _ = try? store.write { tx in
                    let id = step % 40
                    if step % 9 == 0 {
                        _ = try tx[items].remove(id)
                    } else {
                        try tx[items].upsert(Item(id: id, group: step % 3, score: (step * 13) % 50, tag: step % 5))
                    }
                    if step % 4 == 0 { try tx[fixture.owners].upsert(Owner(id: step % 3, name: "owner \(step)")) }
                    if step % 10 == 0 { _ = try tx[fixture.owners].remove((step / 10) % 3) }
                }
            }
            committing.withLock { $0 = false }
            threads.leave()
        }
        let queries = fixture.queries
        for creator in 0..<2 {
            threads.enter()
            Thread.detachNewThread {
                var index = creator
                while index < queries.count * 5, committing.withLock({ $0 }) || index < queries.count {
                    let (name, query) = queries[index % queries.count]
                    let live = store.live(query)
                    made.withLock { $0.append((name, query, live)) }
                    let groupQuery = fixture.groupQueries[index % fixture.groupQueries.count]
                    let groups = store.live(groupQuery.query, groupedBy: groupQuery.key, aggregating: \.score)
                    madeGroups.withLock { $0.append((groupQuery.query, groupQuery.key, groups)) }
                    let joinQuery = fixture.joinQueries[index % fixture.joinQueries.count].query
                    madeJoins.withLock { $0.append((joinQuery, store.live(joinQuery, joining: \.group, to: fixture.owners))) }
                    index += 1
                }
                threads.leave()
            }
        }
        await withCheckedContinuation { continuation in threads.notify(queue: .global()) { continuation.resume() } }
        let final = store.state
        let all = made.withLock { $0 }
        #expect(all.count >= queries.count)
        var stale: [String] = []
        for entry in all where Array(entry.live.value) != reference(entry.query, entry.name, in: final) {
            stale.append(entry.name)
        }
        #expect(stale.isEmpty, "\(stale.count) of \(all.count) live queries are stale: \(stale.prefix(5))")
        let staleGroups = madeGroups.withLock { $0 }.filter {
            $0.live.value.dictionary != groupReference($0.query, key: $0.key, in: final)
        }
        #expect(staleGroups.isEmpty, "\(staleGroups.count) live group-bys are stale")
        let staleJoins = madeJoins.withLock { $0 }.filter { entry in
            let joined = entry.live.value
            return joined.map { $0.row } != reference(entry.query, "join", in: final)
                || !joined.allSatisfy { $0.referenced == final[fixture.owners].find($0.row.group) }
        }
        #expect(staleJoins.isEmpty, "\(staleJoins.count) live joins are stale")
    }
}
