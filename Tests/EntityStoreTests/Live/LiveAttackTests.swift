import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// A row keyed by a String (non-Int WatchKey) with a String group key, a Double rank
/// (NaN, ±0.0, infinities) and an Int bucket.
struct AttackRow: Entity {
    var id: String
    var key: String
    var rank: Double
    var bucket: Int
}

/// Attacks on the live engines: rows removed and inserted again, NaN and ±0.0 in sorted
/// windows and group-bys, large batches against top-k windows, grouped-index equality
/// queries with String IDs, and live queries created while another thread commits.
@Suite struct LiveAttackTests {
    // MARK: Helpers

    /// `rows` stably sorted by `key` (NaN after every other value, among themselves in
    /// insertion order), descending when asked (ties keep insertion order), cut to `limit`.
    static func sortedReference<E>(_ rows: [E], key: (E) -> Double, descending: Bool, limit: Int?) -> [E] {
        let sorted = rows.enumerated().sorted { a, b in
            let (x, y) = (key(a.element), key(b.element))
            if x.isNaN || y.isNaN {
                if x.isNaN != y.isNaN { return y.isNaN }
                return a.offset < b.offset
            }
            if x != y { return descending ? x > y : x < y }
            return a.offset < b.offset
        }.map(\.element)
        return limit.map { Array(sorted.prefix($0)) } ?? sorted
    }

    // MARK: 1. A row removed and inserted again with the same value

    /// A row removed and inserted again with an identical value, alone in one write, takes
    /// a new insertion position: the change set reports it updated, and the equality
    /// query follows.
    @Test func reinsertingTheSameValueAloneMovesTheRow() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 1...3 { try tx[items].insert(Item(id: id, group: 1, score: id, tag: 0)) }
        }
        let live = store.live(LiveQuery(items).where(\.group, equals: 1))
        try store.write { tx in
            _ = try tx[items].remove(1)
            try tx[items].insert(Item(id: 1, group: 1, score: 1, tag: 0))
        }
        #expect(live.value.map(\.id) == reference(LiveQuery(items).where(\.group, equals: 1), "", in: store.state).map(\.id))
    }

    /// Same, with a sibling row of the group updated in the same write: the grouped-index
    /// window's diff moves row 1 to the end, so it replays to the value, and the
    /// whole-table window follows too.
    @Test func reinsertingTheSameValueWithASiblingUpdateReplays() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 1...3 { try tx[items].insert(Item(id: id, group: 1, score: id, tag: 0)) }
        }
        let live = store.live(LiveQuery(items).where(\.group, equals: 1))
        let all = store.live(LiveQuery(items))
        let log = UpdateLog<LiveRows<Item>, LiveDiff<Item>>()
        let token = live.observe { log.append($0) }
        let before = Array(live.value)
        try store.write { tx in
            _ = try tx[items].remove(1)
            try tx[items].insert(Item(id: 1, group: 1, score: 1, tag: 0))
            _ = try tx[items].update(2) { $0.tag = 9 }
        }
        let value = Array(live.value)
        var replayed = before
        for update in log.take() { replayed = update.diff.apply(to: replayed) }
        #expect(value.map(\.id) == [2, 3, 1])
        #expect(replayed == value, "diff replays to \(replayed.map(\.id)), value is \(value.map(\.id))")
        // The whole-table window (insertion order) is told row 1 moved.
        #expect(all.value.map(\.id) == reference(LiveQuery(items), "", in: store.state).map(\.id))
        _ = token
    }

    /// The same across a batch, for a whole-table query (insertion order) and a "first 2
    /// inserted" top-k: both are told that row 1 moved to the end.
    @Test func reinsertingTheSameValueInABatchMovesTheRow() throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 1...3 { try tx[items].insert(Item(id: id, group: 1, score: id, tag: 0)) }
        }
        let all = store.live(LiveQuery(items))
        let first2 = store.live(LiveQuery(items).limit(2))
        try store.batch {
            try store.write { tx in _ = try tx[items].remove(1) }
            try store.write { tx in try tx[items].insert(Item(id: 1, group: 1, score: 1, tag: 0)) }
        }
        #expect(all.value.map(\.id) == reference(LiveQuery(items), "", in: store.state).map(\.id))
        #expect(first2.value.map(\.id) == reference(LiveQuery(items).limit(2), "", in: store.state).map(\.id))
    }

    // MARK: 2. NaN and ±0.0 in sorted windows

    /// A descending window over a Double field holding a NaN: the NaN row sorts last and
    /// its position is found again, so removing the row removes it from the value (with a
    /// limit, the cut back to the limit used to spin on a NaN it could not remove).
    @Test(.timeLimit(.minutes(10)), arguments: [nil, 3, 1] as [Int?])
    func aNaNRowLeavesADescendingWindow(limit: Int?) throws {
        let probes = Table<AttackRow>("probes")
        let store = try EntityStore { probes }
        var query = LiveQuery(probes).sorted(by: \.rank, descending: true)
        if let limit { query = query.limit(limit) }
        let live = store.live(query)
        try store.write { tx in
            for (n, rank) in [1.0, .nan, 2.0, 3.0].enumerated() {
                try tx[probes].insert(AttackRow(id: "p\(n)", key: "a", rank: rank, bucket: 0))
            }
        }
        try store.write { tx in _ = try tx[probes].remove("p1") }
        let ids = live.value.map(\.id)
        #expect(!ids.contains("p1"), "removed NaN row still in the live value \(ids)")
        #expect(ids == Self.sortedReference(Array(store.state[probes]), key: \.rank, descending: true, limit: limit).map(\.id))
    }

    /// An ascending top-k on a Double field with an ordered index: a fill or refill from
    /// the index reads the NaN rows (kept apart in the index) after the others, as rows
    /// entering through a commit sort them, so the window depends on the table, not on
    /// its history.
    @Test func anAscendingTopKWithNaNsAgreesWithARerun() throws {
        let probes = Table<AttackRow>("probes").ordered(\.rank)
        let store = try EntityStore { probes }
        try store.write { tx in
            try tx[probes].insert(AttackRow(id: "a", key: "a", rank: .nan, bucket: 0))
            try tx[probes].insert(AttackRow(id: "b", key: "a", rank: 1, bucket: 0))
        }
        let query = LiveQuery(probes).sorted(by: \.rank).limit(3)
        let early = store.live(query)
        try store.write { tx in try tx[probes].insert(AttackRow(id: "c", key: "a", rank: .nan, bucket: 0)) }
        let late = store.live(query)
        #expect(early.value.map(\.id) == late.value.map(\.id), "same query, same state: \(early.value.map(\.id)) vs \(late.value.map(\.id))")
        let rerun = store.state[probes].sorted(by: \.rank).prefix(3).map(\.id)
        #expect(early.value.map(\.id) == Array(rerun), "live \(early.value.map(\.id)) vs query \(rerun)")
        #expect(late.value.map(\.id) == Array(rerun), "live \(late.value.map(\.id)) vs query \(rerun)")
    }

    // MARK: 3. Group-by extremes over -0.0 / 0.0

    /// -0.0 and +0.0 compare equal, but a group keeps a count for each: when the -0.0
    /// row leaves, the extremes are +0.0, as a re-run says; while both are held, the
    /// minimum is -0.0 and the maximum +0.0, whichever entered first.
    @Test(arguments: [true, false])
    func zeroExtremesFollowTheZerosHeld(negativeFirst: Bool) throws {
        let readings = Table<Reading>("readings")
        let store = try EntityStore { readings }
        let groups = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.value)
        try store.write { tx in
            let zeros: [Double] = negativeFirst ? [-0.0, 0.0] : [0.0, -0.0]
            for (offset, zero) in zeros.enumerated() { try tx[readings].insert(Reading(id: offset + 1, sensor: 0, value: zero)) }
        }
        let both = try #require(groups.value[0])
        let bothRerun = try #require(store.state[readings].query().aggregates(groupedBy: \.sensor, of: \.value)[0])
        for aggregate in [both, bothRerun] {
            #expect(aggregate.min.sign == .minus && aggregate.max.sign == .plus, "min \(aggregate.min), max \(aggregate.max)")
        }
        let negativeID = negativeFirst ? 1 : 2
        try store.write { tx in _ = try tx[readings].remove(negativeID) }
        let rerun = try #require(store.state[readings].query().aggregates(groupedBy: \.sensor, of: \.value)[0])
        let live = try #require(groups.value[0])
        #expect(rerun.min.sign == .plus && rerun.max.sign == .plus)
        #expect(live.min.sign == .plus, "live min is \(live.min) with only a +0.0 row left")
        #expect(live.max.sign == .plus, "live max is \(live.max) with only a +0.0 row left")
        try store.write { tx in try tx[readings].upsert(Reading(id: negativeID, sensor: 0, value: -0.0)) }
        try store.write { tx in _ = try tx[readings].remove(3 - negativeID) }
        let negativeOnly = try #require(groups.value[0])
        #expect(negativeOnly.min.sign == .minus && negativeOnly.max.sign == .minus, "min \(negativeOnly.min), max \(negativeOnly.max)")
    }

    // MARK: 5. Top-k windows under large batches (model test)

    /// Random commits with many rows at once, removals of each window's boundary row,
    /// moves across the boundary, duplicate keys (scores in 0..<6), upserts, batches,
    /// failing writes, restores and undos: each top-k window (limits 0, 1, 2, 5;
    /// ascending and descending; with and without an index; with a range or equality
    /// source) equals its re-run and its diffs replay. A row re-inserted under its ID is
    /// given a different value (see the tests above for the identical-value case).
    @Test(arguments: Soak.seeds(1...1, soak: 1...40))
    func topKWindowsFollowLargeBatches(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 7919)
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in
            for id in 0..<8 { try tx[items].insert(Item(id: id, group: id % 2, score: id % 6, tag: id % 3)) }
        }
        let queries: [(name: String, query: LiveQuery<Item>)] = [
            ("top 1 score", LiveQuery(items).sorted(by: \.score).limit(1)),
            ("top 1 score desc", LiveQuery(items).sorted(by: \.score, descending: true).limit(1)),
            ("top 2 score", LiveQuery(items).sorted(by: \.score).limit(2)),
            ("top 5 score desc", LiveQuery(items).sorted(by: \.score, descending: true).limit(5)),
            ("top 2 tag", LiveQuery(items).sorted(by: \.tag).limit(2)),
            ("top 5 tag desc", LiveQuery(items).sorted(by: \.tag, descending: true).limit(5)),
            ("limit 0 sorted", LiveQuery(items).sorted(by: \.score).limit(0)),
            ("first 1", LiveQuery(items).limit(1)),
            ("first 4", LiveQuery(items).limit(4)),
            ("score 1...4 top 3", LiveQuery(items).where(\.score, in: 1...4).sorted(by: \.score).limit(3)),
            ("score 1...4 top 2 desc", LiveQuery(items).where(\.score, in: 1...4).sorted(by: \.score, descending: true).limit(2)),
            ("group 1 top 2 score", LiveQuery(items).where(\.group, equals: 1).sorted(by: \.score).limit(2)),
            ("group 0 first 3", LiveQuery(items).where(\.group, equals: 0).limit(3)),
            ("group 0", LiveQuery(items).where(\.group, equals: 0)),
            ("odd tag top 3 desc", LiveQuery(items).filter { $0.tag % 2 == 1 }.sorted(by: \.score, descending: true).limit(3)),
        ]
        let lives = queries.map { (name: $0.name, query: $0.query, live: store.live($0.query), log: UpdateLog<LiveRows<Item>, LiveDiff<Item>>()) }
        let tokens = lives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previous = lives.map { Array($0.live.value) }
        var nextID = 1000
        var saved: [EntityState] = []
        func item(_ id: Int) -> Item {
            Item(id: id, group: Int.random(in: 0..<3, using: &random), score: Int.random(in: 0..<6, using: &random),
                 tag: Int.random(in: 0..<4, using: &random))
        }
        func boundaryIDs() -> [Int] { lives.compactMap { $0.live.value.last?.id } }
        func write(_ tx: Transaction) throws {
            let ids = tx.current[items].ids
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1:
                // Many rows at once.
                for _ in 0..<Int.random(in: 1..<25, using: &random) {
                    nextID += 1
                    try tx[items].insert(item(nextID))
                }
            case 2:
                // Remove some window's boundary row.
                if let id = boundaryIDs().randomElement(using: &random), tx.current[items].find(id) != nil { _ = try tx[items].remove(id) }
            case 3:
                // Move a boundary row far past the boundary, or to the front.
                if let id = boundaryIDs().randomElement(using: &random), tx.current[items].find(id) != nil {
                    let score = Bool.random(using: &random) ? 0 : 5
                    _ = try tx[items].update(id) { $0.score = score; $0.tag = score % 4 }
                }
            case 4 where !ids.isEmpty:
                for _ in 0..<Int.random(in: 1..<6, using: &random) {
                    if let id = tx.current[items].ids.randomElement(using: &random) { _ = try tx[items].remove(id) }
                }
            case 5 where !ids.isEmpty:
                for _ in 0..<Int.random(in: 1..<8, using: &random) {
                    if let id = tx.current[items].ids.randomElement(using: &random) {
                        let changed = item(id)
                        _ = try tx[items].update(id) { $0 = changed }
                    }
                }
            case 6 where !ids.isEmpty:
                // Removed and inserted again under its ID with another value.
                if let id = ids.randomElement(using: &random), let old = tx.current[items].find(id) {
                    _ = try tx[items].remove(id)
                    var again = item(id)
                    if again == old { again.tag += 10 }
                    try tx[items].insert(again)
                }
            case 7:
                let id = ids.isEmpty || Bool.random(using: &random) ? nextID + 1 : (ids.randomElement(using: &random) ?? 0)
                nextID = max(nextID, id)
                try tx[items].upsert(item(id))
            default:
                nextID += 1
                try tx[items].insert(item(nextID))
            }
        }
        for step in 0..<200 {
            switch Int.random(in: 0..<24, using: &random) {
            case 0:
                let other = try LiveFixture()
                try other.store.write { tx in
                    for id in 0..<Int.random(in: 0..<12, using: &random) { try tx[other.items].insert(item(id)) }
                }
                try store.replaceAll(with: other.store.state)
            case 1:
                _ = try? store.write { tx in
                    try write(tx)
                    throw TestFailure()
                }
            case 2 where !saved.isEmpty:
                // An undo: a raw core commit back to an earlier state.
                let earlier = saved[Int.random(in: 0..<saved.count, using: &random)]
                try store.core.commit("undo") { (state: inout EntityState) in state = earlier }
            case 3..<7:
                try store.batch {
                    for _ in 0..<Int.random(in: 1..<5, using: &random) { try store.write { try write($0) } }
                }
            case 7..<10:
                try store.write { tx in for _ in 0..<Int.random(in: 2..<8, using: &random) { try write(tx) } }
            default:
                try store.write { try write($0) }
            }
            if Int.random(in: 0..<10, using: &random) == 0 { saved.append(store.state) }
            let state = store.state
            var rerun = Rerun(state)
            var allRight = true
            for (position, entry) in lives.enumerated() {
                let expected = rerun(entry.query)
                let value = Array(entry.live.value)
                if value != expected { allRight = false }
                #expect(value == expected, "seed \(seed) step \(step): \(entry.name): \(value.map(\.id)) vs \(expected.map(\.id))")
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of \(entry.name) do not lead to its value")
                previous[position] = expected
            }
            if !allRight { break }
        }
        _ = tokens
    }

    // MARK: 6. Grouped-index equality queries with String IDs (model test)

    /// Equality queries on a grouped String field (IndexedGroupWindow), String IDs (boxed
    /// WatchKeys): rows removed and inserted again with another value in one write or one
    /// batch, key changes in and out, upserts, failing writes, restores with other
    /// contents, undos, a key absent at first. Each value equals its re-run, its offsets
    /// and lookups agree, and its diffs replay.
    @Test(arguments: Soak.seeds(1...1, soak: 1...40))
    func groupedIndexEqualityFollowsRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 104729)
        let probes = Table<AttackRow>("probes").grouped(\.key).ordered(\.rank)
        let store = try EntityStore { probes }
        let keys = ["k0", "k1", "k2", "absent"]
        func row(_ id: String) -> AttackRow {
            AttackRow(id: id, key: keys[Int.random(in: 0..<3, using: &random)], rank: Double(Int.random(in: 0..<5, using: &random)),
                      bucket: Int.random(in: 0..<100, using: &random))
        }
        try store.write { tx in for n in 0..<6 { try tx[probes].insert(row("r\(n)")) } }
        let lives = keys.map { key in
            (key: key, live: store.live(LiveQuery(probes).where(\.key, equals: key)), log: UpdateLog<LiveRows<AttackRow>, LiveDiff<AttackRow>>())
        }
        let tokens = lives.map { entry in entry.live.observe { entry.log.append($0) } }
        var previous = lives.map { Array($0.live.value) }
        var next = 100
        var saved: [EntityState] = []
        func write(_ tx: Transaction) throws {
            let ids = Array(tx.current[probes].ids)
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                next += 1
                try tx[probes].insert(row("r\(next)"))
            case 2 where !ids.isEmpty:
                _ = try tx[probes].remove(ids.randomElement(using: &random) ?? "")
            case 3 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? ""
                let key = keys[Int.random(in: 0..<3, using: &random)]
                _ = try tx[probes].update(id) { $0.key = key }
            case 4 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? ""
                let bucket = Int.random(in: 0..<100, using: &random)
                _ = try tx[probes].update(id) { $0.bucket = bucket }
            case 5 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? ""
                if let old = tx.current[probes].find(id) {
                    _ = try tx[probes].remove(id)
                    var again = row(id)
                    if again == old { again.bucket += 1000 }
                    try tx[probes].insert(again)
                }
            case 6:
                let id = ids.isEmpty || Bool.random(using: &random) ? "r\(next + 1)" : (ids.randomElement(using: &random) ?? "")
                next += 1
                try tx[probes].upsert(row(id))
            default:
                next += 1
                try tx[probes].insert(row("r\(next)"))
            }
        }
        for step in 0..<200 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                let other = try EntityStore { probes }
                try other.write { tx in
                    for n in 0..<Int.random(in: 0..<10, using: &random) { try tx[probes].insert(row("r\(n * 3)")) }
                }
                try store.replaceAll(with: other.state)
            case 1:
                _ = try? store.write { tx in
                    try write(tx)
                    throw TestFailure()
                }
            case 2 where !saved.isEmpty:
                let earlier = saved[Int.random(in: 0..<saved.count, using: &random)]
                try store.core.commit("undo") { (state: inout EntityState) in state = earlier }
            case 3..<6:
                // A row removed in one write and inserted again (another value) in the next.
                try store.batch {
                    for _ in 0..<Int.random(in: 1..<4, using: &random) { try store.write { try write($0) } }
                    if let id = store.state[probes].ids.randomElement(using: &random), let old = store.state[probes].find(id) {
                        try store.write { tx in _ = try tx[probes].remove(id) }
                        var again = row(id)
                        if again == old { again.bucket += 1000 }
                        try store.write { tx in try tx[probes].insert(again) }
                    }
                }
            case 6..<9:
                try store.write { tx in for _ in 0..<Int.random(in: 2..<10, using: &random) { try write(tx) } }
            default:
                try store.write { try write($0) }
            }
            if Int.random(in: 0..<8, using: &random) == 0 { saved.append(store.state) }
            let state = store.state
            var ok = true
            for (position, entry) in lives.enumerated() {
                let expected = Array(state[probes]).filter { $0.key == entry.key }
                let value = entry.live.value
                ok = ok && Array(value) == expected
                #expect(Array(value) == expected, "seed \(seed) step \(step): key \(entry.key): \(value.map(\.id)) vs \(expected.map(\.id))")
                for (offset, row) in expected.enumerated() {
                    #expect(value.offset(of: row.id) == offset, "seed \(seed) step \(step): key \(entry.key): offset of \(row.id)")
                }
                var replayed = previous[position]
                for update in entry.log.take() { replayed = update.diff.apply(to: replayed) }
                ok = ok && replayed == expected
                #expect(replayed == expected, "seed \(seed) step \(step): the diffs of key \(entry.key) do not lead to its value")
                previous[position] = expected
            }
            if !ok { break }
        }
        _ = tokens
    }

    // MARK: 7. Group-by over Double values with specials (model test)

    /// Random rows with values among -0.0, 0.0, ±infinity, NaN and a few finite values, in
    /// few sensors: each live group's count, sum and extremes equal Query.aggregates re-run
    /// (NaN compared as NaN; -0.0 and 0.0 compared with ==, see the test above for the sign).
    @Test(arguments: Soak.seeds(1...1, soak: 1...40))
    func doubleGroupByFollowsRandomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 31337)
        let readings = Table<Reading>("readings")
        let store = try EntityStore { readings }
        let specials: [Double] = [-0.0, 0.0, .infinity, -.infinity, .nan, 1, -1, 2.5]
        let groups = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.value)
        let filtered = store.live(LiveQuery(readings).filter { $0.id % 2 == 0 }, groupedBy: \.sensor, aggregating: \.value)
        func same(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }
        func same(_ a: GroupAggregate<Double>?, _ b: GroupAggregate<Double>?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            // Extremes agree on the sign of a zero too (-0.0 is the smaller).
            func sameExtreme(_ a: Double, _ b: Double) -> Bool { same(a, b) && (a != 0 || a.sign == b.sign) }
            return a.count == b.count && same(a.sum, b.sum) && sameExtreme(a.min, b.min) && sameExtreme(a.max, b.max)
        }
        for step in 0..<250 {
            try store.write { tx in
                for _ in 0..<Int.random(in: 1..<4, using: &random) {
                    let id = Int.random(in: 0..<16, using: &random)
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        _ = try tx[readings].remove(id)
                    } else {
                        try tx[readings].upsert(Reading(id: id, sensor: Int.random(in: 0..<2, using: &random),
                                                        value: specials[Int.random(in: 0..<specials.count, using: &random)]))
                    }
                }
            }
            let all = store.state[readings].query().aggregates(groupedBy: \.sensor, of: \.value)
            let even = store.state[readings].query().filter { $0.id % 2 == 0 }.aggregates(groupedBy: \.sensor, of: \.value)
            for sensor in 0..<2 {
                #expect(same(groups.value[sensor], all[sensor]), "seed \(seed) step \(step) sensor \(sensor): \(String(describing: groups.value[sensor])) vs \(String(describing: all[sensor]))")
                #expect(same(filtered.value[sensor], even[sensor]), "seed \(seed) step \(step) sensor \(sensor) (even ids)")
            }
        }
    }

    // MARK: 8. Live queries created while another thread commits

    /// One thread commits (single writes and batches); another creates live queries of
    /// every kind meanwhile. Once both are done, every live value equals its re-run.
    // It waits for its writer thread: on threads of its own, not the concurrency pool's.
    @Test(.threadsOfItsOwn, arguments: [(true, true), (false, true), (false, false)])
    func liveQueriesCreatedDuringCommitsEndUpRight(batched: Bool, createDuring: Bool) throws {
        try createdDuringCommits(batched: batched, createDuring: createDuring)
    }

    func createdDuringCommits(batched: Bool, createDuring: Bool) throws {
        let fixture = try LiveFixture()
        let store = fixture.store, items = fixture.items
        try store.write { tx in for id in 0..<20 { try tx[items].insert(Item(id: id, group: id % 3, score: id % 7, tag: id % 4)) } }
        let created = Lock<[(name: String, query: LiveQuery<Item>, live: LiveList<Item>)]>([])
        let queries = fixture.queries
        let writer: @Sendable () -> Void = {
            var random = SplitMix64(seed: 99)
            for step in 0..<Soak.pick(60, soak: 600) {
                func one() throws {
                    try store.write { tx in
                        let id = Int.random(in: 0..<60, using: &random)
                        if Int.random(in: 0..<3, using: &random) == 0 {
                            _ = try tx[items].remove(id)
                        } else {
                            try tx[items].upsert(Item(id: id, group: Int.random(in: 0..<4, using: &random),
                                                      score: Int.random(in: 0..<50, using: &random), tag: step % 5))
                        }
                    }
                }
                if batched { try? store.batch { try one() } } else { try? one() }
            }
        }
        let done = DispatchSemaphore(value: 0)
        let finished = Lock(false)
        let wrapped = Thread {
            writer()
            finished.withLock { $0 = true }
            done.signal()
        }
        if !createDuring {
            for _ in 0..<20 { for entry in queries { created.withLock { $0.append((entry.name, entry.query, store.live(entry.query))) } } }
        }
        wrapped.start()
        var rounds = 0
        while createDuring, rounds < 40, rounds == 0 || !finished.withLock({ $0 }) {
            for entry in queries { created.withLock { $0.append((entry.name, entry.query, store.live(entry.query))) } }
            rounds += 1
        }
        // Every commit delivers before it returns (no other thread commits), so once the
        // writer is done every live value must be up to date: no grace period. (A bounded
        // wait here once compared values with a writer still running on a loaded machine.)
        done.wait()
        let state = store.state
        var wrong: [String: Int] = [:]
        var total: [String: Int] = [:]
        for entry in created.withLock({ $0 }) {
            total[entry.name, default: 0] += 1
            if Array(entry.live.value) != reference(entry.query, entry.name, in: state) { wrong[entry.name, default: 0] += 1 }
        }
        #expect(wrong.isEmpty, "\(rounds) rounds; live values unlike their re-run (name: wrong of total): \(wrong.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)/\(total[$0.key] ?? 0)" })")
        // Whether the stale values are lost for good: one more commit of an unrelated table.
        try store.write { tx in try tx[fixture.owners].upsert(Owner(id: 1, name: "x")) }
        let stillWrong = created.withLock { $0 }.filter { Array($0.live.value) != reference($0.query, $0.name, in: store.state) }.count
        #expect(stillWrong == 0, "\(stillWrong) live values still unlike their re-run after a further commit")
        if let entry = created.withLock({ $0 }).first(where: { $0.name == "all" && Array($0.live.value) != reference($0.query, $0.name, in: store.state) }) {
            let live = Set(entry.live.value.map { "\($0)" }), rerun = Set(reference(entry.query, entry.name, in: store.state).map { "\($0)" })
            Issue.record("'all' live has \(live.subtracting(rerun).sorted()) the re-run has not; lacks \(rerun.subtracting(live).sorted()); revision live \(entry.live.revision) store \(store.revision)")
        }
    }
}
