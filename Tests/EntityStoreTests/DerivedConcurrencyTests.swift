import Dispatch
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// A counter whose `value` is the number of the commit that last wrote it, so a sequence
/// of its values shows which published states it came from.
private struct Counter: Entity {
    var id: Int
    var value: Int
    var group: Int
}

@Suite struct DerivedConcurrencyTests {
    /// Threads create derived queries and streams while two others commit. After the last
    /// delivery, every query must hold what a fresh computation on the final state gives,
    /// and every stream must have yielded the values its entity took in the states
    /// actually published, from its first value on: in commit order, none skipped.
    @Test func queriesAndStreamsCreatedDuringCommitsFollowEveryPublishedState() async throws {
        // Several short rounds: the race is likeliest while the first queries are made.
        for _ in 0..<4 {
            try await createQueriesAndStreamsDuringCommits()
        }
    }

    private func createQueriesAndStreamsDuringCommits() async throws {
        let counters = Table<Counter>("counters").grouped(\.group)
        let store = try EntityStore { counters }
        let published = Recorder<EntityState>()
        published.append(store.state)
        let recording = store.observe { published.append($0.current) }

        let entities = 4
        let groups = 3
        let commitsPerThread = 80
        let queriesPerThread = 40
        let idQueries = Recorder<(id: Int, query: DerivedQuery<Counter?>)>()
        let groupQueries = Recorder<(group: Int, query: DerivedQuery<LiveRows<Counter>>)>()
        let streams = Recorder<(id: Int, stream: AsyncStream<Counter?>)>()
        let streamQueries = Recorder<DerivedQuery<Counter?>>()
        let committers = Lock(2)

        let threads = DispatchGroup()
        func run(_ body: @escaping @Sendable () -> Void) {
            threads.enter()
            Thread.detachNewThread {
                body()
                threads.leave()
            }
        }
        // Every commit writes every entity: `value` is the commit's revision, so each
        // commit changes what every query of an entity reads. Some commits remove one.
        for _ in 0..<2 {
            run {
                for _ in 0..<commitsPerThread {
                    _ = try? store.write { tx in
                        let revision = Int(tx.current.revision) + 1
                        for id in 0..<entities {
                            if (revision + id) % 7 == 0 {
                                try tx[counters].remove(id)
                            } else {
                                try tx[counters].upsert(Counter(id: id, value: revision, group: (revision / 3 + id) % groups))
                            }
                        }
                    }
                }
                committers.withLock { $0 -= 1 }
            }
        }
        for creator in 0..<2 {
            run {
                while store.revision == 0 {}
                var made = 0
                while made < queriesPerThread, committers.withLock({ $0 > 0 }) {
                    let id = (made + creator) % entities
                    switch made % 3 {
                    case 0:
                        idQueries.append((id, store.derived(counters, id: id)))
                    case 1:
                        let group = made % groups
                        groupQueries.append((group, store.derived(counters, where: \.group, equals: group)))
                    default:
                        let query = store.derived(counters, id: id)
                        streamQueries.append(query)
                        streams.append((id, query.values()))
                    }
                    made += 1
                }
            }
        }
        await withCheckedContinuation { continuation in
            threads.notify(queue: .global()) { continuation.resume() }
        }

        // Each commit returned after its delivery or after handing it to the thread then
        // delivering, which delivers everything queued before it stops: all are done.
        let final = store.state
        let history = published.values
        #expect(history.last == final)
        #expect(final.revision == UInt64(2 * commitsPerThread))
        #expect(idQueries.count > 0 && groupQueries.count > 0 && streams.count > 0)

        var stale = 0
        for (id, query) in idQueries.values where query.value != final[counters].find(id) {
            stale += 1
        }
        for (group, query) in groupQueries.values where query.value != final[counters].filter(\.group, equals: group) {
            stale += 1
        }
        #expect(stale == 0, "\(stale) of \(idQueries.count + groupQueries.count) queries differ from the final state")

        // Releasing the queries ends their streams.
        let pending = streams.values
        streamQueries.removeAll()
        let drained = await withTaskGroup(of: (Int, [Counter?]).self) { group in
            for (position, entry) in pending.enumerated() {
                group.addTask { (position, await drain(entry.stream, within: .seconds(2)).elements) }
            }
            var drained = [[Counter?]](repeating: [], count: pending.count)
            for await (position, seen) in group { drained[position] = seen }
            return drained
        }
        var broken: [String] = []
        for ((id, _), seen) in zip(pending, drained) {
            // The values of the entity over the published states, each once, in order.
            var taken: [Counter?] = []
            for state in history {
                let value = state[counters].find(id)
                if taken.isEmpty || taken[taken.count - 1] != value { taken.append(value) }
            }
            // From its first value on, the stream yields exactly the values taken since.
            if seen.isEmpty || Array(taken.suffix(seen.count)) != seen {
                func describe(_ values: some Collection<Counter?>) -> String {
                    values.map { $0.map { String($0.value) } ?? "nil" }.joined(separator: ", ")
                }
                broken.append("entity \(id): yielded [\(describe(seen.prefix(6)))...], published [\(describe(taken.suffix(seen.count).prefix(6)))...]")
            }
        }
        #expect(broken.isEmpty, "\(broken.count) of \(pending.count) streams: \(broken.prefix(3))")
        recording.cancel()
    }

    @Test func aStreamEndsWhenItsQueryIsDeallocated() async throws {
        let lib = try Library()
        try lib.seed()
        var query: DerivedQuery<Book?>? = lib.store.derived(lib.books, id: 10)
        let stream = try #require(query).values()
        try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1 } }
        query = nil
        let drained = await drain(stream, within: .seconds(2))
        #expect(drained.finished)
        #expect(drained.elements.map { $0?.year } == [1969, 1])
    }
}

/// Every element of `stream` until it ends, or until `within` passes (then the consumer is
/// cancelled, so a stream that never ends fails a test instead of hanging it), and whether
/// it ended by itself.
private func drain<Element: Sendable>(
    _ stream: AsyncStream<Element>, within limit: Duration
) async -> (elements: [Element], finished: Bool) {
    let consumer = Task {
        var elements: [Element] = []
        for await element in stream { elements.append(element) }
        return (elements, !Task.isCancelled)
    }
    let watchdog = Task {
        try? await Task.sleep(for: limit)
        consumer.cancel()
    }
    let result = await consumer.value
    watchdog.cancel()
    return result
}
