import EntityStore
import StoreCore
import CBenchSupport
import Synchronization

/// A row for the live-query figures: the bench item's owner, category and quantity, plus
/// a bucket (ID mod 10,000) that gives 10,000 distinct keys at every size.
struct LiveItem: Entity {
    var id: Int
    var ownerID: Int
    var bucket: Int
    var category: String
    var quantity: Int
}

/// The owner a live join reaches.
struct LiveOwner: Entity {
    var id: Int
    var name: String
}

let liveItems = Table<LiveItem>("items").grouped(\.ownerID).grouped(\.bucket).ordered(\.quantity)
let liveOwners = Table<LiveOwner>("owners")

/// `live_query_update_us` and `live_query_memory`.
struct LiveFigures {
    static let keyQueries = 10_000
    static let commitsPerRun = 400

    let data: Dataset
    let repetitions: Repetitions

    func makeStore() throws -> EntityStore {
        let store = try EntityStore {
            liveItems
            liveOwners
        }
        try store.write { tx in
            try tx[liveOwners].insert(contentsOf: (1...data.ownerCount).map { LiveOwner(id: $0, name: "owner \($0)") })
            try tx[liveItems].insert(contentsOf: data.entities.map {
                LiveItem(id: $0.id, ownerID: $0.ownerID, bucket: $0.id % Self.keyQueries, category: $0.category, quantity: $0.quantity)
            })
        }
        return store
    }

    /// The live queries of the figure: a group-by count+sum over the whole table, a
    /// top-100 by an ordered field, a join of one owner's group to the owners, and 10,000
    /// equality queries on distinct keys.
    struct Alive {
        let groups: LiveGroups<String, Int>
        let top: LiveList<LiveItem>
        let join: LiveJoin<LiveItem, LiveOwner>
        let keys: [LiveList<LiveItem>]
        let joinedOwner: Int
    }

    func startQueries(_ store: EntityStore) -> Alive {
        Alive(
            groups: store.live(LiveQuery(liveItems), groupedBy: \.category, aggregating: \.quantity),
            top: store.live(LiveQuery(liveItems).sorted(by: \.quantity, descending: true).limit(100)),
            join: store.live(LiveQuery(liveItems).where(\.ownerID, equals: 1), joining: \.ownerID, to: liveOwners),
            keys: (0..<Self.keyQueries).map { store.live(LiveQuery(liveItems).where(\.bucket, equals: $0)) },
            joinedOwner: 1)
    }

    /// One planned commit: the row, its new quantity and bucket, and its old bucket.
    struct Change {
        let id: Int
        let quantity: Int
        let bucket: Int
        let oldBucket: Int
    }

    /// The change of step `step` of the figure's cycle, planned before the timer starts: a
    /// random row's quantity and bucket change (two key queries and a group); a member of
    /// the joined group changes; a row enters the top 100; the top row leaves it (a refill
    /// from the ordered index).
    func plan(_ store: EntityStore, step: Int, rng: inout SplitMix64) -> Change {
        let state = store.state[liveItems]
        let id: Int
        var quantity = rng.int(in: 0...1_000)
        switch step % 4 {
        case 0: id = rng.int(in: 1...data.size)
        case 1: id = state.filter(\.ownerID, equals: 1).first?.id ?? 1
        case 2:
            id = rng.int(in: 1...data.size)
            quantity = (state.sorted(by: \.quantity, descending: true, limit: 1).first?.quantity ?? 0) + 1
        default:
            id = state.sorted(by: \.quantity, descending: true, limit: 1).first?.id ?? 1
            quantity = 0
        }
        let bucket = rng.int(in: 0...(Self.keyQueries - 1))
        return Change(id: id, quantity: quantity, bucket: bucket, oldBucket: state.find(id)?.bucket ?? 0)
    }

    func apply(_ change: Change, to store: EntityStore) throws {
        try store.write { tx in
            _ = try tx[liveItems].update(change.id) {
                $0.quantity = change.quantity
                $0.bucket = change.bucket
            }
        }
    }

    /// Median µs of a one-row commit with every live query alive (delivery is
    /// synchronous: the commit returns after every due diff is computed and delivered),
    /// against a plain commit plus re-running from scratch the queries it changed; and the
    /// live queries' own share: the same commit on an identical store with no live query,
    /// measured interleaved, step by step (alternately first), subtracted.
    func update() throws -> (figures: [Figure], notes: [String]) {
        let store = try makeStore()
        // The plain twin: the same rows, the same commits (the baseline's too, untimed), no
        // live query. Built on its own rather than from the store's state, so the two share
        // no node whose cache warmth one commit could hand to the other.
        let plain = try makeStore()
        var rng = SplitMix64(seed: 0x11FE)
        // Baseline: the same commits with no live query, plus a re-run of the group-by,
        // the top 100, the join and the two key queries whose key the row left and entered.
        var step = 0
        // A re-run reads the whole table: fewer commits at large sizes (a multiple of the
        // four-step cycle) keep the run short; the figure is a median either way.
        let baselineCommits = max(16, min(Self.commitsPerRun, 4_000_000 / data.size / 4 * 4))
        let baseline = try repetitions.medianOf {
            var latencies: [Double] = []
            for _ in 0..<baselineCommits {
                let change = plan(store, step: step, rng: &rng)
                let (old, new) = (change.oldBucket, change.bucket)
                let start = monotonicNanoseconds()
                try apply(change, to: store)
                let view = store.state[liveItems]
                var sums: [String: (count: Int, sum: Int)] = [:]
                for item in view { sums[item.category, default: (0, 0)].count += 1; sums[item.category, default: (0, 0)].sum += item.quantity }
                let top = view.sorted(by: \.quantity, descending: true, limit: 100)
                let owners = store.state[liveOwners]
                let joined = view.filter(\.ownerID, equals: 1).map { ($0, owners.find($0.ownerID)) }
                let keys = view.filter(\.bucket, equals: old).count + view.filter(\.bucket, equals: new).count
                consume((sums.count, top.count, joined.count, keys))
                latencies.append(Double(monotonicNanoseconds() - start) / 1e3)
                try apply(change, to: plain)
                step += 1
            }
            return median(latencies)
        }
        let alive = startQueries(store)
        let delivered = DeliveryCounter()
        let tokens = [
            alive.groups.observe { _ in delivered.count.add(1, ordering: .relaxed) },
            alive.top.observe { _ in delivered.count.add(1, ordering: .relaxed) },
            alive.join.observe { _ in delivered.count.add(1, ordering: .relaxed) },
        ] + alive.keys.map { $0.observe { _ in delivered.count.add(1, ordering: .relaxed) } }
        var plainMedians: [Double] = [], workMedians: [Double] = []
        let ours = try repetitions.medianOf {
            var latencies: [Double] = [], plainLatencies: [Double] = [], work: [Double] = []
            for _ in 0..<Self.commitsPerRun {
                let change = plan(store, step: step, rng: &rng)
                // Planning read the row in the store; read it in the twin too.
                consume(plain.state[liveItems].find(change.id)?.quantity)
                // Alternately first, so that neither side always meets the caches the
                // other left.
                let withLive: Double, without: Double
                if step.isMultiple(of: 2) {
                    without = try timed { try apply(change, to: plain) }
                    withLive = try timed { try apply(change, to: store) }
                } else {
                    withLive = try timed { try apply(change, to: store) }
                    without = try timed { try apply(change, to: plain) }
                }
                latencies.append(withLive)
                plainLatencies.append(without)
                work.append(withLive - without)
                step += 1
            }
            plainMedians.append(median(plainLatencies))
            workMedians.append(median(work))
            return median(latencies)
        }
        // Every live value must equal its query re-run on the final state.
        let view = store.state[liveItems]
        var problems: [String] = []
        if Array(alive.top.value) != view.sorted(by: \.quantity, descending: true, limit: 100) { problems.append("top 100") }
        if alive.join.value.map({ $0.row }) != view.filter(\.ownerID, equals: 1) { problems.append("join") }
        var counts: [String: Int] = [:]
        for item in view { counts[item.category, default: 0] += 1 }
        if alive.groups.value.count != counts.count || counts.contains(where: { alive.groups.value[$0.key]?.count != $0.value }) {
            problems.append("group-by")
        }
        for key in [0, 1, Self.keyQueries - 1] where key < alive.keys.count && Array(alive.keys[key].value) != view.filter(\.bucket, equals: key) {
            problems.append("key \(key)")
        }
        if Array(plain.state[liveItems]) != Array(view) { problems.append("the plain twin diverged") }
        if !problems.isEmpty { progress("warning: live_query_update: stale live queries: \(problems)") }
        let wakeups = alive.keys.reduce(0) { $0 + $1.wakeups }
        withExtendedLifetime((alive, tokens)) {}
        // The medians of the measured runs (the first is the warm-up's).
        let plainCommit = median(Array(plainMedians.dropFirst(repetitions.warmUp)))
        let liveWork = median(Array(workMedians.dropFirst(repetitions.warmUp)))
        let notes = [
            "live_query_update_us: \(grouped(Self.keyQueries)) live key queries, a group-by over the whole table, "
                + "a top-100 and a join alive; \(grouped(delivered.count.load(ordering: .relaxed))) deliveries, "
                + "\(grouped(wakeups)) key-query wake-ups over \(grouped(step)) commits (at most 2 per commit)"
        ]
        return ([
            Figure(
                name: "live_query_update_us", value: ours, unit: "µs", baseline: baseline, ratio: baseline / ours,
                ratioMeaning: "re-run / live, higher is better", direction: .higherIsBetter,
                baselineMeaning: "plain commit + re-running the group-by, top-100, join and the two changed key queries"),
            Figure(
                name: "live_query_work_us", value: liveWork, unit: "µs", baseline: plainCommit, ratio: liveWork / plainCommit,
                ratioMeaning: "live work / plain commit, lower is better", direction: .lowerIsBetter,
                baselineMeaning: "the same commit on an identical store with no live query (interleaved)"),
        ], notes)
    }

    /// The figure's commits on one store, with the live queries alive or none: for an
    /// instruction profiler (`valgrind --tool=callgrind
    /// --toggle-collect='*LiveFigures*profiledCommit*'`), whose counts, unlike times, are
    /// the same from run to run.
    func profile(withQueries: Bool) throws {
        let store = try makeStore()
        var rng = SplitMix64(seed: 0x11FE)
        let alive = withQueries ? startQueries(store) : nil
        let tokens = alive.map { alive in
            [alive.groups.observe { _ in }, alive.top.observe { _ in }, alive.join.observe { _ in }] + alive.keys.map { $0.observe { _ in } }
        }
        for step in 0..<(Self.commitsPerRun * 4) {
            try profiledCommit(plan(store, step: step, rng: &rng), store: store)
        }
        withExtendedLifetime((alive, tokens)) {}
    }

    /// One commit of ``profile(withQueries:)``, the unit the profiler collects.
    @inline(never)
    func profiledCommit(_ change: Change, store: EntityStore) throws {
        try apply(change, to: store)
    }

    /// Heap bytes per live key query (malloc's bytes in use, which, unlike the resident
    /// size, does not hide allocations that reuse memory freed earlier): 10,000 equality
    /// queries started on the store, against as many `derived(_:id:)` queries.
    func memory() throws -> Figure {
        let store = try makeStore()
        func bytes(_ make: () -> [AnyObject]) -> Double {
            let before = heapBytesInUse()
            let made = make()
            let after = heapBytesInUse()
            withExtendedLifetime(made) {}
            return Double(after - before) / Double(Self.keyQueries)
        }
        let baseline = bytes { (0..<Self.keyQueries).map { store.derived(liveItems, id: $0 + 1) } }
        let ours = bytes { (0..<Self.keyQueries).map { store.live(LiveQuery(liveItems).where(\.bucket, equals: $0)) } }
        return Figure(
            name: "live_query_memory", value: ours, unit: "B/query", baseline: baseline,
            ratio: baseline > 0 ? ours / baseline : .nan,
            ratioMeaning: "ours / derived by ID", direction: .lowerIsBetter,
            baselineMeaning: "a derived(_:id:) query (ours hold results of about N/10,000 rows)")
    }
}

/// The microseconds `body` takes.
private func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = monotonicNanoseconds()
    try body()
    return Double(monotonicNanoseconds() - start) / 1e3
}

/// The bytes malloc has handed out and not taken back (0 where unknown).
func heapBytesInUse() -> Int { Int(bench_heap_bytes_in_use()) }

/// Counts deliveries from any thread.
final class DeliveryCounter: Sendable {
    let count = Atomic<Int>(0)
}
