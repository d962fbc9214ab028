import Dispatch
import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// A row that references another row of its own table (`parent`), for self-joins.
struct AttackNode: Entity {
    var id: Int
    var parent: Int
    var group: Int
    var score: Int
}

/// A row grouped by a Double key (NaN, ±0.0).
struct AttackReading: Entity {
    var id: Int
    var key: Double
    var value: Int
}

/// Attacks on how commits reach live queries: self-joins, raw core commits, signed-zero and
/// NaN keys, large commits against top-k windows, restores of another schema, concurrent
/// committers with observers that commit from inside a delivery.
@Suite struct LiveDeliveryAttackTests {
    /// The rows of `query` re-run from scratch (insertion order, stably sorted by an Int sort
    /// field, cut to the limit).
    static func rerun<E: Entity>(_ query: LiveQuery<E>, in state: EntityState) -> [E] {
        var rows = Array(state[query.table]).filter { query.qualifies($0) }
        if let field = query.sortField as? KeyPath<E, Int> {
            let descending = query.isDescending
            rows = rows.enumerated().sorted { a, b in
                let (x, y) = (a.element[keyPath: field], b.element[keyPath: field])
                if x != y { return descending ? x > y : x < y }
                return a.offset < b.offset
            }.map(\.element)
        }
        if let limit = query.limitCount { rows = Array(rows.prefix(limit)) }
        return rows
    }

    // MARK: Group-by on a NaN key

    /// A group-by whose key is a Double: a row whose key is NaN belongs to no group, in a
    /// live group-by as in a re-run (`aggregates(groupedBy:of:)`), through updates and the
    /// row's removal. (A NaN key equals nothing, not even itself: a dictionary keeps each
    /// such row apart and can never find its group again, so live groups used to pile up.)
    @Test func nanKeyedGroupsFollowARerun() throws {
        let readings = Table<AttackReading>("readings")
        let store = try EntityStore { readings }
        let live = store.live(LiveQuery(readings), groupedBy: \.key, aggregating: \.value)
        func rerun() -> [Double: GroupAggregate<Int>] {
            store.state[readings].query().aggregates(groupedBy: \.key, of: \.value)
        }
        try store.write { tx in
            try tx[readings].insert(AttackReading(id: 1, key: 1, value: 1))
            try tx[readings].insert(AttackReading(id: 2, key: .nan, value: 10))
        }
        #expect(live.value.count == rerun().count, "after insert: live \(live.value.count) groups, rerun \(rerun().count)")
        try store.write { tx in _ = try tx[readings].update(2) { $0.value = 20 } }
        #expect(live.value.count == rerun().count, "after update: live \(live.value.count) groups, rerun \(rerun().count)")
        try store.write { tx in _ = try tx[readings].update(2) { $0.value = 30 } }
        #expect(live.value.count == rerun().count, "after 2nd update: live \(live.value.count) groups, rerun \(rerun().count)")
        try store.write { tx in _ = try tx[readings].remove(2) }
        #expect(live.value.count == rerun().count, "after remove: live \(live.value.count) groups, rerun \(rerun().count)")
        #expect(live.value.count == 1)
    }

    /// Group-bys and equality queries keyed by a Double holding ±0.0 (one key to `==` and
    /// to hashing) and other values, under random updates that flip a key's zero sign,
    /// move rows between keys, remove and re-insert them, in writes and batches: values
    /// equal a re-run and diffs replay.
    @Test(arguments: Soak.seeds(1...1, soak: 1...20))
    func signedZeroKeysFollowRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 65_537)
        let readings = Table<AttackReading>("zeroKeys").grouped(\.key)
        let store = try EntityStore { readings }
        let pool: [Double] = [0, -0.0, 1, -1, .infinity]
        let groups = store.live(LiveQuery(readings), groupedBy: \.key, aggregating: \.value)
        let filtered = store.live(LiveQuery(readings).filter { $0.id % 2 == 0 }, groupedBy: \.key, aggregating: \.value)
        let log = UpdateLog<GroupValues<Double, Int>, GroupDiff<Double, Int>>()
        let token = groups.observe { log.append($0) }
        var replayed = groups.value.dictionary
        let zeros = store.live(LiveQuery(readings).where(\.key, equals: 0.0))
        let negativeZeros = store.live(LiveQuery(readings).where(\.key, equals: -0.0).limit(3))
        for step in 0..<150 {
            let writes = Int.random(in: 1...4, using: &random)
            let body: (Transaction) throws -> Void = { tx in
                for _ in 0..<writes {
                    let id = Int.random(in: 0..<12, using: &random)
                    let key = pool[Int.random(in: 0..<pool.count, using: &random)]
                    let value = Int.random(in: -5...5, using: &random)
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: _ = try tx[readings].remove(id)
                    case 1: try tx[readings].upsert(AttackReading(id: id, key: key, value: value))
                    case 2:
                        if let old = tx.current[readings].find(id) {
                            _ = try tx[readings].remove(id)
                            try tx[readings].insert(AttackReading(id: id, key: -old.key, value: old.value))
                        }
                    case 3:
                        if tx.current[readings].find(id) != nil { _ = try tx[readings].update(id) { $0.key = key } }
                    default:
                        if tx.current[readings].find(id) != nil { _ = try tx[readings].update(id) { $0.value = value } }
                    }
                }
            }
            if Bool.random(using: &random) {
                try store.batch {
                    try store.write { try body($0) }
                    try store.write { try body($0) }
                }
            } else {
                try store.write { try body($0) }
            }
            let state = store.state
            let rerun = state[readings].query().aggregates(groupedBy: \.key, of: \.value)
            #expect(groups.value.dictionary == rerun, "seed \(seed) step \(step): group-by")
            #expect(filtered.value.dictionary == state[readings].query().filter { $0.id % 2 == 0 }.aggregates(groupedBy: \.key, of: \.value),
                    "seed \(seed) step \(step): filtered group-by")
            for update in log.take() { replayed = update.diff.apply(to: replayed) }
            #expect(replayed == rerun, "seed \(seed) step \(step): group-by diffs replay")
            #expect(Array(zeros.value) == Self.rerun(LiveQuery(readings).where(\.key, equals: 0.0), in: state), "seed \(seed) step \(step): key 0")
            #expect(Array(negativeZeros.value) == Self.rerun(LiveQuery(readings).where(\.key, equals: -0.0).limit(3), in: state),
                    "seed \(seed) step \(step): key -0 top 3")
        }
        withExtendedLifetime(token) {}
    }

    // MARK: Self-joins under every kind of commit

    /// Joins whose source and target are the same table (a commit's one changed table is
    /// both the rows and the referenced entities), under inserts, updates, removes,
    /// re-inserts, batches, throwing writes, restores and raw core commits (undo and redo):
    /// rows equal a re-run, diffs replay, referenced entities are the table's.
    @Test(arguments: Soak.seeds(1...1, soak: 1...20))
    func selfJoinsFollowRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 7_919)
        let nodes = Table<AttackNode>("nodes").grouped(\.group).ordered(\.score)
        let store = try EntityStore { nodes }
        try store.write { tx in
            for id in 0..<10 { try tx[nodes].insert(AttackNode(id: id, parent: (id + 3) % 12, group: id % 3, score: id * 7 % 20)) }
        }
        let queries: [(String, LiveQuery<AttackNode>)] = [
            ("all", LiveQuery(nodes)),
            ("group 1 (grouped index)", LiveQuery(nodes).where(\.group, equals: 1)),
            ("top 3 by score", LiveQuery(nodes).sorted(by: \.score).limit(3)),
            ("even scores", LiveQuery(nodes).filter { $0.score % 2 == 0 }),
            ("parent 2", LiveQuery(nodes).where(\.parent, equals: 2)),
        ]
        let joins = queries.map { (name: $0.0, query: $0.1, live: store.live($0.1, joining: \.parent, to: nodes),
                                   log: UpdateLog<JoinedRows<AttackNode, AttackNode>, JoinDiff<AttackNode, AttackNode>>()) }
        let tokens = joins.map { entry in entry.live.observe { entry.log.append($0) } }
        let groups = store.live(LiveQuery(nodes), groupedBy: \.parent, aggregating: \.score)
        var previous = joins.map { Array($0.live.value.rows) }
        var history = [store.state]
        var nextID = 100

        func randomNode(_ id: Int) -> AttackNode {
            AttackNode(id: id, parent: Int.random(in: 0..<14, using: &random), group: Int.random(in: 0..<4, using: &random),
                       score: Int.random(in: 0..<20, using: &random))
        }
        func randomWrite(_ tx: Transaction) throws {
            let ids = Array(tx.current[nodes].ids)
            switch Int.random(in: 0..<9, using: &random) {
            case 0..<2:
                nextID += 1
                // Sometimes an ID a parent field may name already (a referenced entity appears).
                let id = Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 0..<14, using: &random) : nextID
                if tx.current[nodes].find(id) == nil { try tx[nodes].insert(randomNode(id)) }
            case 2..<6 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? 0
                let changed = randomNode(id)
                let field = Int.random(in: 0..<4, using: &random)
                _ = try tx[nodes].update(id) { node in
                    switch field {
                    case 0: node.parent = changed.parent
                    case 1: node.score = changed.score
                    case 2: node.group = changed.group
                    default: node = changed
                    }
                }
            case 6..<8 where !ids.isEmpty:
                _ = try tx[nodes].remove(ids.randomElement(using: &random) ?? 0)
            case 8 where !ids.isEmpty:
                // Removed and inserted again (a new insertion position), maybe changed.
                let id = ids.randomElement(using: &random) ?? 0
                let old = tx.current[nodes].find(id)
                _ = try tx[nodes].remove(id)
                try tx[nodes].insert(Bool.random(using: &random) ? (old ?? randomNode(id)) : randomNode(id))
            default:
                nextID += 1
                try tx[nodes].upsert(randomNode(nextID % 14))
            }
        }

        for step in 0..<150 {
            switch Int.random(in: 0..<24, using: &random) {
            case 0:
                let other = try EntityStore { nodes }
                try other.write { tx in
                    for id in 0..<Int.random(in: 0..<12, using: &random) { try tx[nodes].insert(randomNode(id)) }
                }
                try store.replaceAll(with: other.state)
            case 1:
                _ = try? store.write { tx in
                    try randomWrite(tx)
                    try randomWrite(tx)
                    throw TestFailure()
                }
            case 2:
                // A batch whose last write throws (what came before it is published or not,
                // the live values must follow the store).
                _ = try? store.batch {
                    try store.write { try randomWrite($0) }
                    try store.write { tx in
                        try randomWrite(tx)
                        throw TestFailure()
                    }
                }
            case 3..<6:
                try store.batch {
                    for _ in 0..<Int.random(in: 1..<4, using: &random) { try store.write { try randomWrite($0) } }
                }
            case 6:
                if let earlier = history.randomElement(using: &random) { try store.jump(to: earlier) }
            case 7:
                try store.undoAndRedo(history)
            case 8:
                if let earlier = history.randomElement(using: &random) {
                    try store.batch(jumpingTo: earlier) { try store.write { try randomWrite($0) } }
                }
            case 9..<12:
                try store.write { tx in for _ in 0..<Int.random(in: 2..<10, using: &random) { try randomWrite(tx) } }
            default:
                try store.write { try randomWrite($0) }
            }
            let state = store.state
            history.append(state)
            if history.count > 30 { history.removeFirst() }
            for (position, entry) in joins.enumerated() {
                let expected = Self.rerun(entry.query, in: state)
                let joined = entry.live.value
                #expect(Array(joined.rows) == expected, "seed \(seed) step \(step): \(entry.name)")
                let wrong = joined.filter { $0.referenced != state[nodes].find($0.row.parent) }
                #expect(wrong.isEmpty, "seed \(seed) step \(step): \(entry.name) references \(wrong.map { ($0.row, $0.referenced) })")
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.rows.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not replay")
                previous[position] = expected
            }
            #expect(groups.value.dictionary == state[nodes].query().aggregates(groupedBy: \.parent, of: \.score),
                    "seed \(seed) step \(step): group-by parent")
        }
        withExtendedLifetime(tokens) {}
    }

    // MARK: Raw core commits and batches with two tables, every engine

    /// The fixture's row, group-by and join queries, and derived queries, under raw core
    /// commits to random earlier and later states of the store's history (some of them a
    /// redo whose change set leads from the current state), batches that raw-commit in the
    /// middle, and writes touching both tables: every value equals its re-run.
    @Test(arguments: Soak.seeds(1...1, soak: 1...20))
    func everyEngineFollowsRawCoreCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 31_337)
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items, owners = fixture.owners
        try store.write { tx in
            for id in 0..<12 { try tx[items].insert(Item(id: id, group: id % 3, score: id * 7 % 50, tag: id % 4)) }
            for id in 0..<3 { try tx[owners].insert(Owner(id: id, name: "o\(id)")) }
        }
        let lives = fixture.queries.map { (name: $0.name, query: $0.query, live: store.live($0.query),
                                           log: UpdateLog<LiveRows<Item>, LiveDiff<Item>>()) }
        let tokens = lives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previous = lives.map { Array($0.live.value) }
        let groupLives = fixture.groupQueries.map { entry in
            (name: entry.name, query: entry.query, key: entry.key,
             live: store.live(entry.query, groupedBy: entry.key, aggregating: \.score),
             log: UpdateLog<GroupValues<Int, Int>, GroupDiff<Int, Int>>())
        }
        let groupTokens = groupLives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previousGroups = groupLives.map { $0.live.value.dictionary }
        let ownerGroups = store.live(LiveQuery(owners), groupedBy: \.name, aggregating: \.id)
        let joinLives = fixture.joinQueries.map { entry in
            (name: entry.name, query: entry.query, live: store.live(entry.query, joining: \.group, to: owners))
        }
        let byID = (0..<6).map { store.derived(items, id: $0) }
        let byIDs = store.derived(items, ids: [1, 3, 5, 200])
        let byKey = store.derived(items, where: \.group, equals: 2)
        let byRange = store.derived(items, where: \.score, in: 10...30)
        var history = [store.state]
        var nextID = 100

        func randomItem(_ id: Int) -> Item {
            Item(id: id, group: Int.random(in: 0..<4, using: &random), score: Int.random(in: 0..<60, using: &random),
                 tag: Int.random(in: 0..<5, using: &random))
        }
        func randomWrite(_ tx: Transaction) throws {
            let ids = Array(tx.current[items].ids)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                nextID += 1
                try tx[items].insert(randomItem(nextID))
            case 3..<6 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? 0
                let changed = randomItem(id)
                _ = try tx[items].update(id) { item in
                    if Bool.random(using: &random) { item.group = changed.group } else { item = changed }
                }
            case 6..<8 where !ids.isEmpty:
                _ = try tx[items].remove(ids.randomElement(using: &random) ?? 0)
            default:
                let owner = Int.random(in: 0..<5, using: &random)
                if Bool.random(using: &random) {
                    _ = try tx[owners].remove(owner)
                } else {
                    try tx[owners].upsert(Owner(id: owner, name: "n\(Int.random(in: 0..<3, using: &random))"))
                }
            }
        }

        for step in 0..<150 {
            switch Int.random(in: 0..<16, using: &random) {
            case 0, 1:
                if let earlier = history.randomElement(using: &random) { try store.jump(to: earlier) }
            case 2, 3:
                try store.undoAndRedo(history)
            case 4:
                if let earlier = history.randomElement(using: &random) {
                    try store.batch(jumpingTo: earlier) { try store.write { try randomWrite($0) } }
                }
            case 5..<8:
                try store.batch {
                    for _ in 0..<Int.random(in: 1..<4, using: &random) { try store.write { try randomWrite($0) } }
                }
            case 8..<11:
                // Both tables in one write.
                try store.write { tx in
                    for _ in 0..<Int.random(in: 2..<8, using: &random) { try randomWrite(tx) }
                    try tx[owners].upsert(Owner(id: Int.random(in: 0..<5, using: &random), name: "w\(step % 3)"))
                    nextID += 1
                    try tx[items].insert(randomItem(nextID))
                }
            default:
                try store.write { try randomWrite($0) }
            }
            let state = store.state
            history.append(state)
            if history.count > 40 { history.removeFirst() }
            var rerun = Rerun(state)
            for (position, entry) in lives.enumerated() {
                let expected = rerun(entry.query)
                #expect(Array(entry.live.value) == expected, "seed \(seed) step \(step): \(entry.name)")
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not replay")
                previous[position] = expected
            }
            for (position, entry) in groupLives.enumerated() {
                let expected = rerun.groups(entry.query, key: entry.key)
                #expect(entry.live.value.dictionary == expected, "seed \(seed) step \(step): \(entry.name)")
                var replayed = previousGroups[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not replay")
                previousGroups[position] = expected
            }
            #expect(ownerGroups.value.dictionary == state[owners].query().aggregates(groupedBy: \.name, of: \.id),
                    "seed \(seed) step \(step): owners by name")
            for entry in joinLives {
                let joined = entry.live.value
                #expect(joined.map { $0.row } == reference(entry.query, entry.name, in: state), "seed \(seed) step \(step): \(entry.name)")
                #expect(joined.allSatisfy { $0.referenced == state[owners].find($0.row.group) }, "seed \(seed) step \(step): \(entry.name) refs")
            }
            for (id, derived) in byID.enumerated() {
                #expect(derived.value == state[items].find(id), "seed \(seed) step \(step): derived id \(id)")
            }
            #expect(byIDs.value == [1, 3, 5, 200].compactMap { state[items].find($0) }, "seed \(seed) step \(step): derived ids")
            #expect(Array(byKey.value) == reference(LiveQuery(items).where(\.group, equals: 2), "", in: state),
                    "seed \(seed) step \(step): derived group 2")
            #expect(Array(byRange.value) == reference(LiveQuery(items).where(\.score, in: 10...30).sorted(by: \.score), "", in: state),
                    "seed \(seed) step \(step): derived score range")
        }
        withExtendedLifetime((tokens, groupTokens)) {}
    }

    // MARK: Large commits against top-k windows, with diff replay

    /// Writes of up to 60 changes (many rows entering, leaving and moving within full
    /// top-k windows of 1 to 25 rows, so the touched and evictable maps pass the eight
    /// entries after which they index themselves): values equal a re-run and every diff
    /// replays.
    @Test(arguments: Soak.seeds(1...1, soak: 1...20))
    func largeCommitsAgainstTopKWindowsReplay(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 4_099)
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 0..<80 { try tx[items].insert(Item(id: id, group: id % 3, score: id % 40, tag: id % 7)) }
        }
        var queries: [(String, LiveQuery<Item>)] = []
        for k in [1, 5, 9, 12, 25] {
            queries.append(("top \(k) by score", LiveQuery(items).sorted(by: \.score).limit(k)))
            queries.append(("top \(k) by score desc", LiveQuery(items).sorted(by: \.score, descending: true).limit(k)))
            queries.append(("top \(k) by tag", LiveQuery(items).sorted(by: \.tag).limit(k)))
            queries.append(("first \(k) of group 1", LiveQuery(items).where(\.group, equals: 1).limit(k)))
            queries.append(("first \(k) even", LiveQuery(items).filter { $0.score % 2 == 0 }.limit(k)))
        }
        queries.append(("group 2", LiveQuery(items).where(\.group, equals: 2)))
        queries.append(("all", LiveQuery(items)))
        let lives = queries.map { (name: $0.0, query: $0.1, live: store.live($0.1), log: UpdateLog<LiveRows<Item>, LiveDiff<Item>>()) }
        let tokens = lives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previous = lives.map { Array($0.live.value) }
        var nextID = 1_000
        for round in 0..<40 {
            let body: (Transaction) throws -> Void = { tx in
                let ids = Array(tx.current[items].ids)
                for _ in 0..<Int.random(in: 0...30, using: &random) {
                    guard let id = ids.randomElement(using: &random), tx.current[items].find(id) != nil else { continue }
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: _ = try tx[items].remove(id)
                    case 1:
                        let old = tx.current[items].find(id)
                        _ = try tx[items].remove(id)
                        if let old { try tx[items].insert(old) }
                    default:
                        _ = try tx[items].update(id) {
                            $0.score = Int.random(in: -10..<50, using: &random)
                            if Bool.random(using: &random) { $0.group = Int.random(in: 0..<3, using: &random) }
                            if Bool.random(using: &random) { $0.tag = Int.random(in: -3..<8, using: &random) }
                        }
                    }
                }
                for _ in 0..<Int.random(in: 0...30, using: &random) {
                    nextID += 1
                    try tx[items].insert(Item(id: nextID, group: Int.random(in: 0..<3, using: &random),
                                              score: Int.random(in: -10..<50, using: &random), tag: Int.random(in: -3..<8, using: &random)))
                }
            }
            if round % 3 == 0 {
                try store.batch {
                    try store.write { try body($0) }
                    try store.write { try body($0) }
                }
            } else {
                try store.write { try body($0) }
            }
            let state = store.state
            var rerun = Rerun(state)
            for (position, entry) in lives.enumerated() {
                let expected = rerun(entry.query)
                #expect(Array(entry.live.value) == expected, "seed \(seed) round \(round): \(entry.name)")
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) round \(round): the diffs of \(entry.name) do not replay")
                previous[position] = expected
            }
        }
        withExtendedLifetime(tokens) {}
    }

    // MARK: Concurrent committers and re-entrant observers

    /// Three threads commit at once (writes touching both tables, batches), an observer of
    /// a live query commits from inside its handler (a re-entrant delivery), and live
    /// queries of every kind are created and released meanwhile: once done, every live
    /// value equals its re-run.
    @Test(.timeLimit(.minutes(10))) func concurrentCommittersAndReentrantObservers() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items, owners = fixture.owners
        try store.write { tx in
            for id in 0..<30 { try tx[items].insert(Item(id: id, group: id % 4, score: id % 13, tag: id % 3)) }
        }
        let lives = fixture.queries.map { (name: $0.name, query: $0.query, live: store.live($0.query)) }
        let groups = fixture.groupQueries.map { (query: $0.query, key: $0.key, live: store.live($0.query, groupedBy: $0.key, aggregating: \.score)) }
        let joins = fixture.joinQueries.map { (name: $0.name, query: $0.query, live: store.live($0.query, joining: \.group, to: owners)) }
        // An observer that answers each change of group 1 with a commit of its own, from
        // inside the delivery (bounded so it ends).
        let echoes = Lock(0)
        let echo = lives[1].live.observe { _ in
            let again = echoes.withLock { count -> Bool in count += 1; return count < 200 }
            guard again else { return }
            _ = try? store.write { tx in try tx[owners].upsert(Owner(id: 1, name: "echo")) }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var random = SplitMix64(seed: UInt64(worker + 1) &* 977)
            for step in 0..<150 {
                if worker == 3 {
                    // Live queries come and go while the others commit.
                    let query = fixture.queries[step % fixture.queries.count].query
                    let live = store.live(query)
                    let joined = store.live(query, joining: \.group, to: owners)
                    _ = (live.value.count, joined.value.count)
                    continue
                }
                let base = 1_000 * (worker + 1)
                let body: (Transaction) throws -> Void = { tx in
                    let id = base + Int.random(in: 0..<25, using: &random)
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: _ = try tx[items].remove(id)
                    case 1: try tx[owners].upsert(Owner(id: Int.random(in: 0..<4, using: &random), name: "w\(worker)-\(step)"))
                    default:
                        try tx[items].upsert(Item(id: id, group: Int.random(in: 0..<4, using: &random),
                                                  score: Int.random(in: 0..<50, using: &random), tag: Int.random(in: 0..<3, using: &random)))
                        if let shared = tx.current[items].find(step % 30) {
                            _ = try tx[items].update(shared.id) { $0.score = (shared.score + worker) % 50 }
                        }
                    }
                }
                if step % 5 == 0 {
                    try? store.batch {
                        try store.write { try body($0) }
                        try store.write { try body($0) }
                    }
                } else {
                    try? store.write { try body($0) }
                }
            }
        }
        let state = store.state
        for entry in lives {
            #expect(Array(entry.live.value) == reference(entry.query, entry.name, in: state), "\(entry.name)")
        }
        for entry in groups {
            #expect(entry.live.value.dictionary == groupReference(entry.query, key: entry.key, in: state))
        }
        for entry in joins {
            let joined = entry.live.value
            #expect(joined.map { $0.row } == reference(entry.query, entry.name, in: state), "\(entry.name)")
            #expect(joined.allSatisfy { $0.referenced == state[owners].find($0.row.group) }, "\(entry.name) refs")
        }
        withExtendedLifetime(echo) {}
    }

    // MARK: A table of another entity type under the same name

    /// A restore (`replaceAll`) from a store whose `items` table holds another entity type,
    /// or the same type with other indexes or relations, is refused with an error naming
    /// the difference: live queries and derived values read the state as the schema they
    /// were made for (before, only table names were compared, and queries of `Item` kept
    /// their old rows for good once the table held `Twin`s). The store and its live
    /// queries are untouched.
    @Test func restoresOfAnotherSchemaAreRefused() throws {
        struct Twin: Entity {
            var id: Int
            var group: Int
            var score: Int
            var tag: Int
        }
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in for id in 0..<4 { try tx[items].insert(Item(id: id, group: id % 2, score: id, tag: 0)) } }
        let itemGroup = store.live(LiveQuery(items).where(\.group, equals: 1))
        let itemGroups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        let before = store.state
        let twins = Table<Twin>("items").grouped(\.group).ordered(\.score)
        let otherType = try EntityStore { twins; fixture.owners }
        try otherType.write { tx in try tx[twins].insert(Twin(id: 9, group: 1, score: 9, tag: 0)) }
        let otherIndexes = try EntityStore { Table<Item>("items").grouped(\.group); fixture.owners }
        let otherRelations = try EntityStore {
            Table<Item>("items").grouped(\.group).ordered(\.score).references(\.group, to: fixture.owners, onDelete: .cascade)
            fixture.owners
        }
        for (name, other) in [("entity type", otherType), ("indexes", otherIndexes), ("relations", otherRelations)] {
            #expect(throws: EntityStoreError.self, "a restore of other \(name)") { try store.replaceAll(with: other.state) }
        }
        do {
            try store.replaceAll(with: otherType.state)
        } catch let error as EntityStoreError {
            #expect("\(error)".contains("items") && "\(error)".contains("Twin"), "\(error)")
        }
        #expect(store.state == before)
        #expect(Array(itemGroup.value) == Self.rerun(LiveQuery(items).where(\.group, equals: 1), in: store.state))
        #expect(itemGroups.value.count == 2)
        // The same schema built again is accepted.
        let same = try EntityStore { Table<Item>("items").grouped(\.group).ordered(\.score); fixture.owners }
        try same.write { tx in try tx[Table<Item>("items")].insert(Item(id: 7, group: 1, score: 3, tag: 0)) }
        try store.replaceAll(with: same.state)
        #expect(Array(itemGroup.value) == [Item(id: 7, group: 1, score: 3, tag: 0)])
    }
}

/// The raw core commits of an app's undo history, which live queries must follow like any
/// other commit.
extension EntityStore {
    /// Sets the state back to `earlier` through a raw core commit (an undo).
    fileprivate func jump(to earlier: EntityState) throws {
        try core.commit("jump") { (state: inout EntityState) in state = earlier }
    }

    /// Undoes the last state of `history`, then redoes it: the redo's change set leads
    /// from the undone state, so it is applied incrementally. Nothing with fewer than two.
    fileprivate func undoAndRedo(_ history: [EntityState]) throws {
        guard history.count >= 2 else { return }
        let last = history[history.count - 1], before = history[history.count - 2]
        try core.commit("undo") { (state: inout EntityState) in state = before }
        try core.commit("redo") { (state: inout EntityState) in state = last }
    }

    /// A batch with a raw jump to `earlier` between two calls of `write`.
    fileprivate func batch(jumpingTo earlier: EntityState, around write: () throws -> Void) throws {
        try batch {
            try write()
            try jump(to: earlier)
            try write()
        }
    }
}
