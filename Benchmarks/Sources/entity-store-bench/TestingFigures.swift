import EntityStore
import EntityStoreSQLite
import EntityStoreTesting

/// What EntityStoreTesting's helpers cost, as their doc comments state it: each figure
/// against the plain library calls the helper makes on top of its own checks.
struct TestingFigures {
    let repetitions: Repetitions

    /// `testing_round_trip_ms`: `assertRoundTrip()` on the store, against a plain
    /// `snapshot(to:)` plus `restore(from:)` of the same store (the helper adds a verify,
    /// a dynamic restore and the comparison).
    func roundTrip(store: EntityStore) throws -> Figure {
        let ours = try repetitions.medianOf {
            let start = monotonicNanoseconds()
            guard try store.assertRoundTrip() else { throw BenchFailure("the round trip did not match") }
            return Double(monotonicNanoseconds() - start) / 1e6
        }
        let plain = try repetitions.medianOf {
            let file = TemporaryFile(prefix: "testing")
            defer { file.remove() }
            let start = monotonicNanoseconds()
            try store.snapshot(to: file.path)
            try EntityStore(schema: store.schema).restore(from: file.path)
            return Double(monotonicNanoseconds() - start) / 1e6
        }
        return Figure(
            name: "testing_round_trip_ms", value: ours, unit: "ms", baseline: plain, ratio: ours / plain,
            ratioMeaning: "ours / snapshot + restore", direction: .lowerIsBetter, baselineMeaning: "snapshot(to:) + restore(from:)")
    }

    /// `testing_assert_write_us`: an exhaustive `assertWrite` of a one-entity update,
    /// against the same `write` alone.
    func assertWrite(store: EntityStore, size: Int) throws -> Figure {
        var rng = SplitMix64(seed: 17)
        let ours = try repetitions.medianOf {
            let id = rng.int(in: 1...size)
            let start = monotonicNanoseconds()
            try store.assertWrite { tx in _ = try tx[items].update(id) { $0.quantity += 1 } } expected: { state in
                state[items].update(id) { $0.quantity += 1 }
            }
            return Double(monotonicNanoseconds() - start) / 1e3
        }
        let plain = try repetitions.medianOf {
            let id = rng.int(in: 1...size)
            let start = monotonicNanoseconds()
            try store.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
            return Double(monotonicNanoseconds() - start) / 1e3
        }
        return Figure(
            name: "testing_assert_write_us", value: ours, unit: "µs", baseline: plain, ratio: ours / plain,
            ratioMeaning: "ours / write", direction: .lowerIsBetter, baselineMeaning: "the write alone")
    }

    /// `testing_assert_changes_chain_us`: `assertChanges` of an app function of three
    /// commits (a one-entity update each), against the same three writes alone: the
    /// helper merges the commits' change sets as they are published, so it costs what
    /// they changed, not the store's size.
    func assertChangesOfSeveralCommits(store: EntityStore, size: Int) throws -> Figure {
        var rng = SplitMix64(seed: 23)
        func three(_ ids: [Int]) throws {
            for id in ids { try store.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } } }
        }
        let ours = try repetitions.medianOf {
            let ids = (0..<3).map { _ in rng.int(in: 1...size) }
            let start = monotonicNanoseconds()
            try store.assertChanges(of: { try three(ids) }) { state in
                for id in ids { state[items].update(id) { $0.quantity += 1 } }
            }
            return Double(monotonicNanoseconds() - start) / 1e3
        }
        let plain = try repetitions.medianOf {
            let ids = (0..<3).map { _ in rng.int(in: 1...size) }
            let start = monotonicNanoseconds()
            try three(ids)
            return Double(monotonicNanoseconds() - start) / 1e3
        }
        return Figure(
            name: "testing_assert_changes_chain_us", value: ours, unit: "µs", baseline: plain, ratio: ours / plain,
            ratioMeaning: "ours / writes", direction: .lowerIsBetter, baselineMeaning: "the three writes alone")
    }

    /// `testing_crash_safety_s`: `assertCrashSafe` over a sequence of 100 rows and two
    /// full snapshots (every kill, power loss and I/O error), against one run of the
    /// same sequence; the note gives the number of points.
    func crashSafety() throws -> (Figure, String) {
        let schema = try Schema { items }
        func sequence(_ store: EntityStore, save: (String) throws -> Void) throws {
            try store.write { tx in
                for id in 1...100 {
                    try tx[items].insert(BenchItem(id: id, name: "item \(id)", category: "c", quantity: id, price: 1, note: nil, ownerID: id % 10))
                }
            }
            try save("first")
            try store.write { tx in for id in 1...10 { _ = try tx[items].update(id) { $0.quantity = 0 } } }
            try save("second")
        }
        var report: CrashSafetyReport?
        let ours = try Repetitions(warmUp: 0, measured: 1).medianOf {
            let start = monotonicNanoseconds()
            report = try assertCrashSafe(schema: schema) { run in
                try sequence(run.store) { name in _ = try run.save(name) { try run.store.snapshot(to: run.path) } }
            }
            return Double(monotonicNanoseconds() - start) / 1e9
        }
        let plain = try repetitions.medianOf {
            let file = TemporaryFile(prefix: "testing")
            defer { file.remove() }
            let store = EntityStore(schema: schema)
            let start = monotonicNanoseconds()
            try sequence(store) { _ in _ = try store.snapshot(to: file.path) }
            return Double(monotonicNanoseconds() - start) / 1e9
        }
        let figure = Figure(
            name: "testing_crash_safety_s", value: ours, unit: "s", baseline: plain, ratio: ours / plain,
            ratioMeaning: "ours / one run", direction: .lowerIsBetter, baselineMeaning: "the sequence once, no fault")
        return (figure, "testing_crash_safety_s: \(report.map { String(describing: $0) } ?? "no report")")
    }
}

/// A benchmark whose helper reported a mismatch.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
