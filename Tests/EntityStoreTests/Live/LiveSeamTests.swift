import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// Live queries where features meet: restores and raw core commits back to an earlier
/// state, joins whose rows and referenced entities change in one commit.
@Suite struct LiveSeamTests {
    /// Rows 1 and 2 inserted, a state kept, row 2 moved to a new place with the same value,
    /// then the kept state restored (by `replaceAll`, or by a raw core commit): every
    /// live query must stand as if created on the restored state, so a later insert lands
    /// after row 2, not before it.
    @Test(arguments: [false, true])
    func aRestoreOfEqualRowsTakesTheirPlaces(rawCoreCommit: Bool) throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        let one = Item(id: 1, group: 1, score: 7, tag: 0), two = Item(id: 2, group: 1, score: 7, tag: 1)
        try store.write { tx in try tx[items].insert(contentsOf: [one, two]) }
        let early = store.state
        let queries: [(String, LiveQuery<Item>)] = [
            ("all", LiveQuery(items)),
            ("group 1", LiveQuery(items).where(\.group, equals: 1)),
            ("top 10 by score", LiveQuery(items).sorted(by: \.score).limit(10)),
            ("top 2 by score", LiveQuery(items).sorted(by: \.score).limit(2)),
            ("top 10 by score desc", LiveQuery(items).sorted(by: \.score, descending: true).limit(10)),
            ("first 10", LiveQuery(items).limit(10)),
        ]
        let lives = queries.map { (name: $0.0, query: $0.1, live: store.live($0.1)) }
        try store.write { tx in
            _ = try tx[items].remove(2)
            try tx[items].insert(two)
        }
        if rawCoreCommit {
            try store.core.commit { $0 = early }
        } else {
            try store.replaceAll(with: early)
        }
        try store.write { tx in try tx[items].insert(Item(id: 3, group: 1, score: 7, tag: 2)) }
        for entry in lives {
            #expect(Array(entry.live.value) == reference(entry.query, entry.name, in: store.state), "\(entry.name)")
        }
    }

    /// One write updates a referenced owner and rewrites the only row referencing it (the
    /// row releases and retains the owner in one commit): the diff must still carry the
    /// owner's new value, or its removal, for a client that applies diffs.
    @Test(arguments: [false, true])
    func aJoinDiffCarriesAReferencedChangeWhenItsRowsAreRewritten(removingTheOwner: Bool) throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items, owners = fixture.owners
        try store.write { tx in
            try tx[owners].insert(Owner(id: 1, name: "before"))
            try tx[items].insert(Item(id: 10, group: 1, score: 1, tag: 0))
        }
        let live = store.live(LiveQuery(items), joining: \.group, to: owners)
        let log = UpdateLog<JoinedRows<Item, Owner>, JoinDiff<Item, Owner>>()
        let token = live.observe { log.append($0) }
        // A client's copy of the referenced entities, kept by applying diffs alone.
        var client: [Int: Owner] = [1: Owner(id: 1, name: "before")]
        try store.write { tx in
            if removingTheOwner {
                _ = try tx[owners].remove(1)
            } else {
                _ = try tx[owners].update(1) { $0.name = "after" }
            }
            _ = try tx[items].update(10) { $0.tag = 5 }
        }
        for update in log.take() {
            for (id, value) in update.diff.referenced { client[id] = value }
        }
        #expect(client[1] == (removingTheOwner ? nil : Owner(id: 1, name: "after")))
        #expect(client[1] == live.value.referenced(1))
        _ = token
    }
}
