import EntityStore
import EntityStoreTestSupport
import Synchronization
import Testing

/// A key that counts its comparisons, to tell an index lookup from a scan.
private struct Probe: Hashable, Comparable, Sendable, Codable {
    static let comparisons = Atomic<Int>(0)
    var value: Int

    static func == (lhs: Probe, rhs: Probe) -> Bool {
        comparisons.wrappingAdd(1, ordering: .relaxed)
        return lhs.value == rhs.value
    }

    static func < (lhs: Probe, rhs: Probe) -> Bool {
        comparisons.wrappingAdd(1, ordering: .relaxed)
        return lhs.value < rhs.value
    }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// An ID that counts how often it is hashed, to tell a count from a walk that probes rows.
private struct TrackedID: Hashable, Comparable, Sendable, Codable {
    static let hashes = Atomic<Int>(0)
    var value: Int

    func hash(into hasher: inout Hasher) {
        Self.hashes.wrappingAdd(1, ordering: .relaxed)
        hasher.combine(value)
    }

    static func < (lhs: TrackedID, rhs: TrackedID) -> Bool { lhs.value < rhs.value }
}

private struct Measured: Entity {
    static let tagReads = Atomic<Int>(0)
    var id: TrackedID
    var probe: Probe
    var tag: Int?
    var score: Int

    /// `tag`, read through a computed property that counts its reads.
    var watchedTag: Int? {
        Self.tagReads.wrappingAdd(1, ordering: .relaxed)
        return tag
    }
}

/// Counts the calls of a query's filter.
private final class Calls: Sendable {
    let count = Atomic<Int>(0)

    func record() -> Bool {
        count.wrappingAdd(1, ordering: .relaxed)
        return true
    }
}

private let orderedOnly = Table<Measured>("orderedOnly").ordered(\.probe).ordered(\.watchedTag).ordered(\.score)
private let groupedProbes = Table<Measured>("groupedProbes").grouped(\.probe)

/// The counters are shared, so these tests run one at a time.
@Suite("Index paths do the work their documented cost allows", .serialized)
struct QueryCostTests {
    private func rows(count: Int, seed: UInt64) -> [Measured] {
        var random = SplitMix64(seed: seed)
        return (1...count).map { id in
            Measured(
                id: TrackedID(value: id), probe: Probe(value: Int.random(in: 0..<40, using: &random)),
                tag: Bool.random(using: &random) ? Int.random(in: 0..<5, using: &random) : nil, score: Int.random(in: 0..<3, using: &random))
        }
    }

    private func store(_ rows: [Measured]) throws -> EntityStore {
        let store = try EntityStore { orderedOnly; groupedProbes }
        try store.write { tx in
            try tx[orderedOnly].insert(contentsOf: rows)
            try tx[groupedProbes].insert(contentsOf: rows)
        }
        return store
    }

    /// `filter`, `count` and `first(where:equals:)` of a view use an ordered index when the
    /// field has no unique or grouped one: O(log n) comparisons, not one per row.
    @Test func viewEqualityUsesAnOrderedIndex() throws {
        let rows = rows(count: 2_000, seed: 41)
        let store = try store(rows)
        let view = store.state[orderedOnly]
        for value in [0, 7, 39, 40] {
            let expected = rows.filter { $0.probe.value == value }.map(\.id)
            Probe.comparisons.store(0, ordering: .relaxed)
            let found = view.filter(\.probe, equals: Probe(value: value)).map(\.id)
            let counted = view.count(\.probe, equals: Probe(value: value))
            let first = view.first(where: \.probe, equals: Probe(value: value))?.id
            let comparisons = Probe.comparisons.load(ordering: .relaxed)
            #expect(found == expected && counted == expected.count && first == expected.first)
            #expect(comparisons < 200, "\(comparisons) comparisons for 2,000 rows")
        }
    }

    /// `count` of one equality on an ordered index comes from the B-tree's subtree sizes:
    /// no row is probed (a walk would hash each match's ID).
    @Test func orderedEqualityCountReadsNoRow() throws {
        let rows = rows(count: 1_500, seed: 42)
        let store = try store(rows)
        let view = store.state[orderedOnly]
        for score in 0..<4 {
            TrackedID.hashes.store(0, ordering: .relaxed)
            let counted = view.query().where(\.score, equals: score).count
            #expect(TrackedID.hashes.load(ordering: .relaxed) == 0)
            #expect(counted == rows.filter { $0.score == score }.count)
        }
    }

    /// `!=` counts from a grouped index's group, `whereNil` from an ordered index's size.
    @Test func complementCountsComeFromIndexSizes() throws {
        let rows = rows(count: 1_500, seed: 43)
        let store = try store(rows)
        for value in [3, 40] {
            let expected = rows.filter { $0.probe.value != value }.count
            Probe.comparisons.store(0, ordering: .relaxed)
            let counted = store.state[groupedProbes].query().where(\.probe, notEquals: Probe(value: value)).count
            #expect(Probe.comparisons.load(ordering: .relaxed) < 10)
            #expect(counted == expected)
            // The filter itself still agrees, on the index's table and the other.
            #expect(store.state[orderedOnly].query().where(\.probe, notEquals: Probe(value: value)).count == expected)
            #expect(store.state[groupedProbes].query().where(\.probe, notEquals: Probe(value: value)).ids.count == expected)
        }
        Measured.tagReads.store(0, ordering: .relaxed)
        let nils = store.state[orderedOnly].query().whereNil(\.watchedTag).count
        let nonNils = store.state[orderedOnly].query().whereNotNil(\.watchedTag).count
        #expect(Measured.tagReads.load(ordering: .relaxed) == 0)
        #expect(nils == rows.filter { $0.tag == nil }.count && nonNils == rows.count - nils)
        #expect(store.state[groupedProbes].query().whereNil(\.watchedTag).count == nils)
    }

    /// A query without a sort stops reading at its limit whatever its source: a range,
    /// several keys, a prefix, a scan.
    @Test func unsortedQueriesStopAtTheirLimit() throws {
        let rows = rows(count: 600, seed: 44)
        let store = try store(rows)
        let view = store.state[orderedOnly], grouped = store.state[groupedProbes]
        let queries: [(Query<Measured>, Calls) -> Query<Measured>] = [
            { query, calls in query.where(\.score, in: 0...).filter { _ in calls.record() } },
            { query, calls in query.where(\.probe, oneOf: (0..<40).map { Probe(value: $0) }).filter { _ in calls.record() } },
            { query, calls in query.whereNotNil(\.watchedTag).filter { _ in calls.record() } },
            { query, calls in query.filter { _ in calls.record() } },
        ]
        for (position, make) in queries.enumerated() {
            for table in [view, grouped] {
                let calls = Calls()
                let page = make(table.query(), calls).offset(2).limit(3).results
                #expect(page.count == 3)
                #expect(calls.count.load(ordering: .relaxed) == 5, "query \(position) read past its page")
                // The page is the start of the unpaged results, in the same order.
                #expect(page.map(\.id) == Array(make(table.query(), Calls()).results.dropFirst(2).prefix(3)).map(\.id))
            }
        }
    }
}
