import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

@Suite struct LiveQueryModelTests {
    /// Random commits (inserts, key-changing updates, removes, batches, failing writes,
    /// restores) with live queries of every kind alive: after each commit every live
    /// value equals its query re-run from scratch, and each delivered diff turns the
    /// previous value into the new one.
    @Test(arguments: Soak.seeds(1...2, soak: 1...80))
    func liveRowsFollowRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        // Some rows before the queries start, so initial values come from indexes too.
        try store.write { tx in
            for id in 0..<12 { try tx[items].insert(Item(id: id, group: id % 3, score: id * 7 % 50, tag: id % 4)) }
        }
        let lives = fixture.queries.map { (name: $0.name, query: $0.query, live: store.live($0.query), log: UpdateLog<LiveRows<Item>, LiveDiff<Item>>()) }
        let tokens = lives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previous = lives.map { Array($0.live.value) }
        let groupLives = fixture.groupQueries.map { entry in
            (name: entry.name, query: entry.query, key: entry.key,
             live: store.live(entry.query, groupedBy: entry.key, aggregating: \.score), log: UpdateLog<GroupValues<Int, Int>, GroupDiff<Int, Int>>())
        }
        let groupTokens = groupLives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previousGroups = groupLives.map { $0.live.value.dictionary }
        let joinLives = fixture.joinQueries.map { entry in
            (name: entry.name, query: entry.query, live: store.live(entry.query, joining: \.group, to: fixture.owners),
             log: UpdateLog<JoinedRows<Item, Owner>, JoinDiff<Item, Owner>>())
        }
        let joinTokens = joinLives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previousJoins = joinLives.map { Array($0.live.value.rows) }
        var nextID = 100

        func randomItem(_ id: Int) -> Item {
            Item(id: id, group: Int.random(in: 0..<4, using: &random), score: Int.random(in: 0..<60, using: &random),
                 tag: Int.random(in: 0..<5, using: &random))
        }
        func randomWrite(_ tx: Transaction) throws {
            let ids = tx.current[items].ids
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                nextID += 1
                try tx[items].insert(randomItem(nextID))
            case 3..<7 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? 0
                let changed = randomItem(id)
                let field = Int.random(in: 0..<4, using: &random)
                _ = try tx[items].update(id) { item in
                    switch field {
                    case 0: item.group = changed.group
                    case 1: item.score = changed.score
                    case 2: item.tag = changed.tag
                    default: item = changed
                    }
                }
            case 7..<9 where !ids.isEmpty:
                _ = try tx[items].remove(ids.randomElement(using: &random) ?? 0)
            case 9:
                let owner = Int.random(in: 0..<5, using: &random)
                if Bool.random(using: &random) {
                    _ = try tx[fixture.owners].remove(owner)
                } else {
                    try tx[fixture.owners].upsert(Owner(id: owner, name: "owner \(Int.random(in: 0..<100, using: &random))"))
                }
            default:
                nextID += 1
                try tx[items].upsert(randomItem(nextID))
            }
        }

        for step in 0..<250 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                // A restore: a state with other rows replaces everything.
                let other = try LiveFixture()
                try other.store.write { tx in
                    for id in 0..<Int.random(in: 0..<15, using: &random) { try tx[other.items].insert(randomItem(id)) }
                    for id in 0..<Int.random(in: 0..<5, using: &random) { try tx[other.owners].insert(Owner(id: id, name: "restored")) }
                }
                try store.replaceAll(with: other.store.state)
            case 1:
                // A failing write leaves no trace.
                _ = try? store.write { tx in
                    try randomWrite(tx)
                    try randomWrite(tx)
                    throw TestFailure()
                }
            case 2..<5:
                try store.batch {
                    for _ in 0..<Int.random(in: 1..<4, using: &random) { try store.write { try randomWrite($0) } }
                }
            case 5..<7:
                try store.write { tx in for _ in 0..<Int.random(in: 2..<12, using: &random) { try randomWrite(tx) } }
            case 7:
                // A row removed and inserted again under its ID (a new insertion sequence),
                // within one batch: the change set calls it updated.
                if let id = store.state[items].ids.randomElement(using: &random) {
                    let again = randomItem(id)
                    try store.batch {
                        try store.write { tx in _ = try tx[items].remove(id) }
                        try store.write { tx in try tx[items].insert(again) }
                    }
                }
            default:
                try store.write { try randomWrite($0) }
            }
            let state = store.state
            var rerun = Rerun(state)
            for (position, entry) in lives.enumerated() {
                let expected = rerun(entry.query)
                let value = entry.live.value
                #expect(Array(value) == expected, "seed \(seed) step \(step): \(entry.name)")
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not lead to its value")
                #expect(value.map(\.id).allSatisfy { value.offset(of: $0) != nil })
                previous[position] = expected
            }
            for (position, entry) in groupLives.enumerated() {
                let expected = rerun.groups(entry.query, key: entry.key)
                #expect(entry.live.value.dictionary == expected, "seed \(seed) step \(step): \(entry.name)")
                var replayed = previousGroups[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not lead to its value")
                previousGroups[position] = expected
            }
            for (position, entry) in joinLives.enumerated() {
                let expected = rerun(entry.query)
                let joined = entry.live.value
                #expect(joined.map { $0.row } == expected, "seed \(seed) step \(step): \(entry.name)")
                #expect(joined.allSatisfy { $0.referenced == state[fixture.owners].find($0.row.group) },
                        "seed \(seed) step \(step): \(entry.name) references \(joined.filter { $0.referenced != state[fixture.owners].find($0.row.group) }.map { ($0.row, $0.referenced) }) owners \(Array(state[fixture.owners]))")
                var replayed = previousJoins[position]
                for update in entry.log.take() { replayed = update.diff.rows.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not lead to its value")
                previousJoins[position] = expected
            }
        }
        _ = (tokens, groupTokens, joinTokens)
    }

    /// A diff reports each kind of change at its offsets.
    @Test func diffReportsInsertsRemovalsUpdatesAndMoves() throws {
        let fixture = try LiveFixture()
        let items = fixture.items
        try fixture.store.write { tx in
            try tx[items].insert(contentsOf: [
                Item(id: 1, group: 0, score: 10, tag: 0), Item(id: 2, group: 0, score: 20, tag: 0),
                Item(id: 3, group: 0, score: 30, tag: 0),
            ])
        }
        let live = fixture.store.live(LiveQuery(items).where(\.group, equals: 0).sorted(by: \.score))
        let log = UpdateLog<LiveRows<Item>, LiveDiff<Item>>()
        let token = live.observe { log.append($0) }
        try fixture.store.write { tx in
            try tx[items].insert(Item(id: 4, group: 0, score: 15, tag: 0))  // inserted at 1
            _ = try tx[items].update(3) { $0.score = 5 }                      // moved 2 -> 0
            _ = try tx[items].update(2) { $0.tag = 9 }                        // updated in place
            _ = try tx[items].update(1) { $0.group = 1 }                      // left
        }
        let diff = try #require(log.take().first?.diff)
        #expect(diff.removed == [.init(offset: 0, id: 1)])
        #expect(diff.inserted.map(\.offset) == [1])
        #expect(diff.moved.map { [$0.from, $0.to] } == [[2, 0]])
        #expect(diff.updated.map(\.offset) == [2])
        #expect(live.value.map(\.id) == [3, 4, 2])
        _ = token
    }
}
