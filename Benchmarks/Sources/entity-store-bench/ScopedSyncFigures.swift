import CBenchPQ
import EntityStore
import EntityStorePostgres
import Foundation
import StoreCore

/// The figures of a scoped replica (`PostgresSync` with a selection): one customer's rows
/// out of N orders over ``scopedCustomers`` customers (the items with `ownerID` taken as
/// the customer, spread evenly), against a replica of the whole store.
extension PostgresFigures {
    /// Customers the orders are spread over.
    static let scopedCustomers = 1_000
    /// The customer the scoped replica holds.
    static let scopedCustomer = 7
    /// Measured rounds of the latency and pull figures.
    static let scopedRounds = 100

    /// `scoped_load_ms`, `scoped_resident_bytes`, `scoped_latency_ms` and
    /// `scoped_pull_ms` (and `scoped_pull_elsewhere_ms`), each against a whole replica.
    func scopedFigures() throws -> (figures: [Figure], notes: [String]) {
        let target = try PostgresTarget(url: url, schema: "bench_scoped")
        defer { dropSchemas(["bench_scoped"]) }
        dropSchemas(["bench_scoped"])
        let customers = Self.scopedCustomers
        let writer = try makeEmptyStore()
        try writer.write { tx in
            try tx[items].insert(contentsOf: data.entities.map { item in
                var order = item
                order.ownerID = (item.id - 1) % customers + 1
                return order
            })
        }
        var writerOptions = PostgresSync.Options()
        writerOptions.origin = "bench-scoped-writer"
        let writerSync = PostgresSync(store: writer, target: target, options: writerOptions)
        defer { blockingIgnoringErrors { await writerSync.close() } }
        _ = try blocking { try await writerSync.open() }
        let selection = PostgresSelection.tables(["items"]).filtering("items", try .field("ownerID", equals: Self.scopedCustomer))
        let inScope = writer.state[items].all().filter { $0.ownerID == Self.scopedCustomer }.map(\.id)
        let elsewhere = writer.state[items].all().prefix(10_000).filter { $0.ownerID != Self.scopedCustomer }.map(\.id)
        var notes: [String] = []

        func replica(_ scoped: Bool) throws -> (EntityStore, PostgresSync) {
            let store = try makeEmptyStore()
            var options = PostgresSync.Options()
            options.origin = scoped ? "bench-scoped" : "bench-whole"
            return (store, PostgresSync(store: store, target: target, selection: scoped ? selection : .all, options: options))
        }

        // Resident memory first, while the allocator has not yet kept freed pages of a
        // whole load: the growth of the process's resident bytes over one open().
        progress("  scoped_resident_bytes")
        let before = residentBytes() ?? 0
        let (kept, keptSync) = try replica(true)
        _ = try blocking { try await keptSync.open() }
        let scopedResident = max(0, (residentBytes() ?? 0) - before)
        let (whole, wholeSync) = try replica(false)
        let beforeWhole = residentBytes() ?? 0
        _ = try blocking { try await wholeSync.open() }
        let wholeResident = max(0, (residentBytes() ?? 0) - beforeWhole)
        defer { blockingIgnoringErrors { await keptSync.close(); await wholeSync.close() } }
        notes.append(
            "scoped_resident_bytes: the scoped replica holds \(grouped(kept.state[items].count)) of \(grouped(whole.state[items].count)) rows "
                + "(customer \(Self.scopedCustomer) of \(grouped(customers))); resident growth over its open(), against a whole replica's")

        // Load time: open() of a scoped replica against open() of a whole one. Not
        // alternated, and the whole ones first: the first reads of a freshly written table
        // (hint bits, the server's analyze of it) and the release of a million rows after a
        // whole run would otherwise land in the scoped runs. Each run's store is released
        // before the next.
        progress("  scoped_load_ms")
        func openSeconds(_ scoped: Bool) throws -> Double {
            let (store, sync) = try replica(scoped)
            let elapsed = try seconds { _ = try blocking { try await sync.open() } }
            blockingIgnoringErrors { await sync.close() }
            withExtendedLifetime(store) {}
            return elapsed
        }
        let wholeSeconds = try repetitions.medianOf { try openSeconds(false) }
        let scopedSeconds = try repetitions.medianOf { try openSeconds(true) }
        // Where a scoped open's time goes: a new connection, and the restore of the selection alone.
        let connectSeconds = try repetitions.medianOf { try seconds { PQfinish(try connect()) } }
        let restoreSeconds = try repetitions.medianOf {
            let plain = try makeEmptyStore()
            return try seconds { _ = try blocking { try await plain.restore(from: target, selection: selection) } }
        }
        notes.append(
            "scoped_load_ms: of a scoped open(), a new libpq connection takes \(String(connectSeconds * 1000, decimals: 1)) ms "
                + "and store.restore(from:selection:) of the same rows \(String(restoreSeconds * 1000, decimals: 1)) ms (medians)")

        // Latency: the writer commits a one-row update of the customer's rows and pushes;
        // the scoped replica, listening, sees it in a derived query. Baseline: the whole
        // replica, listening too, seeing the same rounds.
        progress("  scoped_latency_ms: \(Self.scopedRounds) rounds")
        let followers = [kept, whole]
        let running = [keptSync, wholeSync].map { sync in Task.detached { await sync.start() } }
        Thread.sleep(forTimeInterval: 0.3)
        var generator = SplitMix64(seed: 77)
        var scopedLatencies: [Double] = [], wholeLatencies: [Double] = []
        for round in 0..<(Self.scopedRounds + 10) {
            let id = inScope[generator.int(in: 0...(inScope.count - 1))]
            let arrivals = Arrivals(count: followers.count)
            let watched = followers.map { $0.derived(items, id: id) }
            let observations = watched.enumerated().map { index, query in
                let before = query.value?.quantity
                return query.observe { _, new in if new?.quantity != before { arrivals.record(index) } }
            }
            let start = monotonicNanoseconds()
            try writer.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
            _ = try blocking { try await writerSync.push() }
            guard let times = arrivals.wait(seconds: 5) else { throw BenchFailure("a replica did not see a change within 5 s") }
            if round >= 10 {
                scopedLatencies.append(Double(times[0] - start) / 1e6)
                wholeLatencies.append(Double(times[1] - start) / 1e6)
            }
            for observation in observations { observation.cancel() }
            withExtendedLifetime(watched) {}
            Thread.sleep(forTimeInterval: 0.005)
        }
        for task in running { task.cancel() }
        blockingIgnoringErrors { for task in running { await task.value } }

        // Pull cost per push: the writer pushes one row; each replica pulls (not listening),
        // timed around pull(). Once a row of the customer, once a row of another customer
        // (which the scoped replica reads from the change log and finds out of scope).
        progress("  scoped_pull_ms: \(Self.scopedRounds) rounds")
        func pullTimes(_ ids: [Int]) throws -> (scoped: [Double], whole: [Double]) {
            var scoped: [Double] = [], wholeTimes: [Double] = []
            for round in 0..<(Self.scopedRounds + 10) {
                let id = ids[generator.int(in: 0...(ids.count - 1))]
                try writer.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
                _ = try blocking { try await writerSync.push() }
                let scopedTime = try seconds { _ = try blocking { try await keptSync.pull() } }
                let wholeTime = try seconds { _ = try blocking { try await wholeSync.pull() } }
                if round >= 10 {
                    scoped.append(scopedTime * 1000)
                    wholeTimes.append(wholeTime * 1000)
                }
            }
            return (scoped, wholeTimes)
        }
        let pullIn = try pullTimes(inScope)
        let pullOut = try pullTimes(elsewhere)
        if kept.state[items].all().contains(where: { $0.ownerID != Self.scopedCustomer }) || kept.state[items].count != inScope.count {
            progress("warning: the scoped replica does not hold exactly its customer's rows")
        }
        notes.append(
            "scoped_latency_ms / scoped_pull_ms: \(Self.scopedRounds) rounds; latency p99 scoped \(String(quantile(scopedLatencies, 0.99), decimals: 2)) ms, "
                + "whole \(String(quantile(wholeLatencies, 0.99), decimals: 2)) ms; pull() wall time per one-row push (two round trips on the connection), "
                + "a row of another customer: scoped p50 \(String(quantile(pullOut.scoped, 0.5), decimals: 3)) ms, whole \(String(quantile(pullOut.whole, 0.5), decimals: 3)) ms")
        let (latency, wholeLatency) = (quantile(scopedLatencies, 0.5), quantile(wholeLatencies, 0.5))
        let (pull, wholePull) = (quantile(pullIn.scoped, 0.5), quantile(pullIn.whole, 0.5))
        let (pullElsewhere, wholePullElsewhere) = (quantile(pullOut.scoped, 0.5), quantile(pullOut.whole, 0.5))
        return ([
            Figure(
                name: "scoped_load_ms", value: scopedSeconds * 1000, unit: "ms", baseline: wholeSeconds * 1000, ratio: scopedSeconds / wholeSeconds,
                ratioMeaning: "scoped / whole", direction: .lowerIsBetter, baselineMeaning: "open() of a whole replica"),
            Figure(
                name: "scoped_resident_bytes", value: Double(scopedResident), unit: "bytes", baseline: Double(wholeResident),
                ratio: Double(scopedResident) / Double(max(1, wholeResident)), ratioMeaning: "scoped / whole", direction: .lowerIsBetter,
                baselineMeaning: "resident growth over a whole replica's open()"),
            Figure(
                name: "scoped_latency_ms", value: latency, unit: "ms (p50)", baseline: wholeLatency, ratio: latency / wholeLatency,
                ratioMeaning: "scoped / whole", direction: .lowerIsBetter, baselineMeaning: "a listening whole replica, same rounds"),
            Figure(
                name: "scoped_pull_ms", value: pull, unit: "ms (p50)", baseline: wholePull, ratio: pull / wholePull,
                ratioMeaning: "scoped / whole", direction: .lowerIsBetter, baselineMeaning: "a whole replica's pull of the same push"),
            Figure(
                name: "scoped_pull_elsewhere_ms", value: pullElsewhere, unit: "ms (p50)", baseline: wholePullElsewhere,
                ratio: pullElsewhere / wholePullElsewhere, ratioMeaning: "scoped / whole", direction: .lowerIsBetter,
                baselineMeaning: "a whole replica's pull of a push outside the selection"),
        ], notes)
    }
}
