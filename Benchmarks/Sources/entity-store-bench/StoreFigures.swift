import EntityStore
import StoreCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's CPU time in nanoseconds: unlike wall time, it leaves out the
/// time the thread spent descheduled while other processes ran.
@inline(__always)
func threadCPUNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Holds the previous state of every commit, as an observer that keeps history would.
final class RetainedState: Sendable {
    let previous = Mutex<EntityState?>(nil)
}

/// An empty store with the benchmark's table.
func makeEmptyStore() throws -> EntityStore {
    try EntityStore { items }
}

/// A store holding `entities`, inserted in one transaction.
func makeStore(_ entities: [BenchItem]) throws -> EntityStore {
    let store = try makeEmptyStore()
    try store.write { tx in try tx[items].insert(contentsOf: entities) }
    return store
}

/// A plain Dictionary holding `entities`, built the way the `insert` baseline builds it.
func makeDictionary(_ entities: [BenchItem]) -> [Int: BenchItem] {
    var dictionary: [Int: BenchItem] = [:]
    for entity in entities { dictionary[entity.id] = entity }
    return dictionary
}

/// One commit that updates one entity.
@inline(__always)
func bumpQuantity(_ store: EntityStore, _ id: Int) throws {
    try store.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
}

/// The EntityStore figures of one size, with the Dictionary and store they share.
struct StoreFigures {
    let data: Dataset
    let repetitions: Repetitions

    // MARK: bytes_per_entity

    /// Resident memory growth per entity of a store and of a Dictionary, each built in a
    /// phase of its own from the already generated entities (so entity strings are shared
    /// with the source array in both and only the containers' own memory is counted).
    func bytesPerEntity() throws -> (Figure, note: String) {
        let count = Double(data.size)
        let dictionaryBytes: Double = {
            let before = residentBytes() ?? 0
            let dictionary = makeDictionary(data.entities)
            let after = residentBytes() ?? 0
            withExtendedLifetime(dictionary) {}
            return Double(after - before)
        }()
        var steadyBytes = 0.0
        let storeBytes: Double = try {
            let before = residentBytes() ?? 0
            let store = try makeStore(data.entities)
            let after = residentBytes() ?? 0
            // The state keeps the last commit's change set (here: N inserted IDs) until
            // the next commit; measure once more after a one-entity commit.
            try bumpQuantity(store, 1)
            steadyBytes = Double((residentBytes() ?? 0) - before)
            withExtendedLifetime(store) {}
            return Double(after - before)
        }()
        let ours = storeBytes / count
        let baseline = dictionaryBytes / count
        let note = "bytes_per_entity after one more one-entity commit (the bulk insert's change set released): "
            + "\(String(format2: steadyBytes / count)) B"
        return (Figure(
            name: "bytes_per_entity", value: ours, unit: "B/entity", baseline: baseline, ratio: ours / baseline,
            ratioMeaning: "ours / Dictionary", direction: .lowerIsBetter,
            baselineMeaning: "[Int: BenchItem] built by insertion"), note)
    }

    // MARK: insert

    /// Entities per second inserting all N into an empty store in one transaction, and
    /// into an empty Dictionary (no reserveCapacity). Returns the last store built.
    func insert() throws -> (Figure, store: EntityStore, dictionary: [Int: BenchItem]) {
        let count = Double(data.size)
        var dictionary: [Int: BenchItem] = [:]
        var store = try makeEmptyStore()
        let (baselineSeconds, oursSeconds) = try repetitions.pairedMedians(baseline: {
            dictionary = [:]
            var fresh: [Int: BenchItem] = [:]
            let elapsed = seconds {
                for entity in data.entities { fresh[entity.id] = entity }
            }
            dictionary = fresh
            return elapsed
        }, ours: {
            store = try makeEmptyStore()
            let target = store
            return try seconds {
                try target.write { tx in try tx[items].insert(contentsOf: data.entities) }
            }
        })
        precondition(store.state[items].count == data.size && dictionary.count == data.size)
        let ours = count / oursSeconds
        let baseline = count / baselineSeconds
        return (Figure(
            name: "insert", value: ours, unit: "entities/s", baseline: baseline, ratio: ours / baseline,
            ratioMeaning: "ours / Dictionary", direction: .higherIsBetter,
            baselineMeaning: "[Int: BenchItem] insert, no reserveCapacity"), store, dictionary)
    }

    // MARK: lookup

    /// Random gets by ID per second through a hoisted view, and through the Dictionary.
    func lookup(store: EntityStore, dictionary: [Int: BenchItem]) -> Figure {
        let ids = data.lookupIDs
        let count = Double(ids.count)
        var baselineSum = 0
        let view = store.state[items]
        var oursSum = 0
        let (baselineSeconds, oursSeconds) = repetitions.pairedMedians(baseline: {
            var sum = 0
            let elapsed = seconds {
                for id in ids { if let entity = dictionary[id] { sum &+= entity.quantity } }
            }
            baselineSum = sum
            return elapsed
        }, ours: {
            var sum = 0
            let elapsed = seconds {
                for id in ids { if let entity = view.find(id) { sum &+= entity.quantity } }
            }
            oursSum = sum
            return elapsed
        })
        if oursSum != baselineSum { progress("warning: lookup checksums differ (\(oursSum) vs \(baselineSum))") }
        let ours = count / oursSeconds
        let baseline = count / baselineSeconds
        return Figure(
            name: "lookup", value: ours, unit: "lookups/s", baseline: baseline, ratio: ours / baseline,
            ratioMeaning: "ours / Dictionary", direction: .higherIsBetter,
            baselineMeaning: "[Int: BenchItem] subscript")
    }

    // MARK: index_query_us

    /// Microseconds per grouped-index query of one owner key, against a linear scan of
    /// the Dictionary's values for the same key.
    func indexQuery(store: EntityStore, dictionary: [Int: BenchItem]) -> Figure {
        let keys = data.ownerKeys
        let view = store.state[items]
        var oursCounts: [Int] = []
        let oursSeconds = repetitions.medianOf {
            var counts: [Int] = []
            counts.reserveCapacity(keys.count)
            let elapsed = seconds {
                for key in keys { counts.append(view.filter(\.ownerID, equals: key).count) }
            }
            oursCounts = counts
            return elapsed
        }
        // A scan is O(N): scan fewer keys at large sizes (the figure is per query).
        let scanned = Array(keys.prefix(max(5, min(keys.count, 20_000_000 / data.size))))
        var scanCounts: [Int] = []
        let baselineSeconds = repetitions.medianOf {
            var counts: [Int] = []
            counts.reserveCapacity(scanned.count)
            let elapsed = seconds {
                for key in scanned { counts.append(dictionary.values.filter { $0.ownerID == key }.count) }
            }
            scanCounts = counts
            return elapsed
        }
        if Array(oursCounts.prefix(scanned.count)) != scanCounts {
            progress("warning: index query results differ from the Dictionary scan")
        }
        let ours = oursSeconds / Double(keys.count) * 1e6
        let baseline = baselineSeconds / Double(scanned.count) * 1e6
        return Figure(
            name: "index_query_us", value: ours, unit: "µs/query", baseline: baseline, ratio: baseline / ours,
            ratioMeaning: "Dictionary scan / ours", direction: .higherIsBetter,
            baselineMeaning: "linear scan of Dictionary values")
    }

    // MARK: full iteration (the GRDB fetch-all comparison's baseline)

    /// Rows per second iterating every entity of the store's current state.
    func iterationRate(store: EntityStore) -> Double {
        let view = store.state[items]
        var total = 0
        let elapsed = repetitions.medianOf {
            var sum = 0
            let elapsed = seconds { for entity in view { sum &+= entity.quantity } }
            total = sum
            return elapsed
        }
        consume(total)
        return Double(view.count) / elapsed
    }

    // MARK: commit_p50_us, commit_p99_us

    static let commitsPerRun = 2_000
    static let warmUpCommits = 500

    /// p50 and p99 latency (µs) of one-entity update commits on random IDs of `store`,
    /// with an observer attached that retains every previous state.
    /// With `backgroundRuns` (a counter of completed background operations), each measured
    /// run of commits also lasts until at least one whole background operation has
    /// started and finished during it.
    func commitLatency(
        store: EntityStore, seed: UInt64, backgroundRuns: (() -> Int)? = nil
    ) throws -> (p50: Double, p99: Double) {
        let retained = RetainedState()
        let observation = store.observe { changes in retained.previous.withLock { $0 = changes.previous } }
        defer { observation.cancel() }
        let size = store.state[items].count
        var rng = SplitMix64(seed: seed)
        func run(_ commits: Int, spanning backgroundRuns: (() -> Int)? = nil) throws -> [Double] {
            var latencies: [Double] = []
            latencies.reserveCapacity(commits)
            let finishedBefore = backgroundRuns?() ?? 0
            func spanned() -> Bool { backgroundRuns.map { $0() >= finishedBefore + 2 } ?? true }
            while latencies.count < commits || !spanned() {
                let id = rng.int(in: 1...size)
                let start = monotonicNanoseconds()
                try bumpQuantity(store, id)
                latencies.append(Double(monotonicNanoseconds() - start) / 1e3)
            }
            return latencies
        }
        _ = try run(Self.warmUpCommits)
        var p50s: [Double] = []
        var p99s: [Double] = []
        for _ in 0..<max(3, repetitions.measured) {
            let latencies = try run(Self.commitsPerRun, spanning: backgroundRuns)
            p50s.append(percentile(latencies, 50))
            p99s.append(percentile(latencies, 99))
        }
        if retained.previous.withLock({ $0 == nil }) { progress("warning: the observer retained no previous state") }
        return (median(p50s), median(p99s))
    }

    // MARK: commit_p999_us, commit_p9999_us, commit_max_us

    static let tailCommits = 200_000

    /// The tail of one-entity update commits on random IDs of `store`, with an observer
    /// attached that retains every previous state: p50, p99, p99.9, p99.99 and the
    /// maximum (µs) over one run of `commits` commits after 500 warm-up commits (one run,
    /// so that a periodic step, such as a fold of the row map, falls inside it as often
    /// as it happens), and the slowest commits. Each commit is timed twice: in the
    /// thread's CPU time, which the tail figures use, since on a shared machine the wall
    /// time of a few commits in 10,000 includes whole scheduler time slices given to other
    /// processes; and in wall time, reported alongside.
    func commitTail(store: EntityStore, seed: UInt64, commits: Int = Self.tailCommits) throws -> (cpu: CommitTail, wall: CommitTail) {
        let retained = RetainedState()
        let observation = store.observe { changes in retained.previous.withLock { $0 = changes.previous } }
        defer { observation.cancel() }
        let size = store.state[items].count
        var rng = SplitMix64(seed: seed)
        for _ in 0..<Self.warmUpCommits { try bumpQuantity(store, rng.int(in: 1...size)) }
        var cpu: [Double] = []
        var wall: [Double] = []
        cpu.reserveCapacity(commits)
        wall.reserveCapacity(commits)
        for _ in 0..<commits {
            let id = rng.int(in: 1...size)
            let start = monotonicNanoseconds()
            let cpuStart = threadCPUNanoseconds()
            try bumpQuantity(store, id)
            let cpuEnd = threadCPUNanoseconds()
            let end = monotonicNanoseconds()
            cpu.append(Double(cpuEnd - cpuStart) / 1e3)
            wall.append(Double(end - start) / 1e3)
        }
        if retained.previous.withLock({ $0 == nil }) { progress("warning: the observer retained no previous state") }
        return (CommitTail(cpu), CommitTail(wall))
    }

    /// The commit figures: on the store of N entities and, as baseline, on a store of
    /// 10,000 entities built in the same run. `commit_p50_us` and `commit_p99_us` are
    /// medians over runs of 2,000 commits (wall time); the tail figures come from one run
    /// of 200,000, in thread CPU time (see `commitTail`).
    func commit(store: EntityStore) throws -> (figures: [Figure], notes: [String]) {
        let small = try makeStore(Array(data.entities.prefix(10_000)))
        let baseline = try commitLatency(store: small, seed: 0xC0FFEE)
        let ours = try commitLatency(store: store, seed: 0xC0FFEE)
        let baselineTail = try commitTail(store: small, seed: 0x7A11).cpu
        let (tail, wallTail) = try commitTail(store: store, seed: 0x7A11)
        func figure(_ name: String, _ value: Double, _ base: Double) -> Figure {
            Figure(
                name: name, value: value, unit: "µs", baseline: base, ratio: value / base,
                ratioMeaning: "ours / 10k-entity store", direction: .lowerIsBetter,
                baselineMeaning: "same commit on a 10,000-entity store")
        }
        let figures = [
            figure("commit_p50_us", ours.p50, baseline.p50),
            figure("commit_p99_us", ours.p99, baseline.p99),
            figure("commit_p999_us", tail.p999, baselineTail.p999),
            figure("commit_p9999_us", tail.p9999, baselineTail.p9999),
            figure("commit_max_us", tail.max, baselineTail.max),
        ]
        return (figures, [
            tail.note(label: "N, thread CPU time"), wallTail.note(label: "N, wall time"),
            baselineTail.note(label: "10,000, thread CPU time"),
        ])
    }

    // MARK: derived_notify_us

    static let derivedCommitsPerRun = 101

    /// Wall time (µs, median) of a one-entity commit while min(100,000, N) derived
    /// queries by ID are alive, against the same commit with none.
    func derivedNotify(store: EntityStore) throws -> (Figure, watched: Int) {
        let watched = min(100_000, data.size)
        var rng = SplitMix64(seed: 0xDE41_7ED)
        func medianCommit() throws -> Double {
            var latencies: [Double] = []
            for _ in 0..<Self.derivedCommitsPerRun {
                let id = rng.int(in: 1...watched)
                let start = monotonicNanoseconds()
                try bumpQuantity(store, id)
                latencies.append(Double(monotonicNanoseconds() - start) / 1e3)
            }
            return median(latencies)
        }
        let baseline = try repetitions.medianOf(medianCommit)
        let queries = (1...watched).map { store.derived(items, id: $0) }
        let ours = try repetitions.medianOf(medianCommit)

        // Exactly the changed entity's derived query must re-read.
        let target = rng.int(in: 1...watched)
        let before = queries.map(\.recomputations)
        try bumpQuantity(store, target)
        let after = queries.map(\.recomputations)
        let increased = zip(before, after).enumerated().filter { $0.element.1 > $0.element.0 }.map { $0.offset + 1 }
        if increased != [target] {
            progress("warning: derived_notify: expected only query \(target) to re-read, got \(increased.count): \(increased.prefix(5))")
        }
        if queries[target - 1].value != store.state[items].find(target) {
            progress("warning: derived_notify: query \(target) does not hold the entity's new value")
        }
        withExtendedLifetime(queries) {}
        return (Figure(
            name: "derived_notify_us", value: ours, unit: "µs", baseline: baseline, ratio: ours / baseline,
            ratioMeaning: "with / without derived queries", direction: .lowerIsBetter,
            baselineMeaning: "same commit, no derived query"), watched)
    }
}

/// The latency distribution of one long run of commits (µs).
struct CommitTail {
    let commits: Int
    let p50: Double
    let p99: Double
    let p999: Double
    let p9999: Double
    let max: Double
    /// The slowest commits, slowest first.
    let slowest: [Double]

    /// The distribution of `latencies` (nearest rank).
    init(_ latencies: [Double]) {
        let sorted = latencies.sorted()
        func rank(_ p: Double) -> Double {
            sorted[Swift.min(sorted.count, Swift.max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))) - 1]
        }
        commits = sorted.count
        p50 = rank(50)
        p99 = rank(99)
        p999 = rank(99.9)
        p9999 = rank(99.99)
        max = sorted[sorted.count - 1]
        slowest = Array(sorted.suffix(6).reversed())
    }

    func note(label: String) -> String {
        "commit tail at \(label), \(grouped(commits)) commits with an observer holding previous: p50 \(String(format2: p50)), "
            + "p99 \(String(format2: p99)), p99.9 \(String(format2: p999)), p99.99 \(String(format2: p9999)), "
            + "max \(String(format2: max)) µs; slowest \(slowest.map { String(format2: $0) }.joined(separator: ", ")) µs"
    }
}
