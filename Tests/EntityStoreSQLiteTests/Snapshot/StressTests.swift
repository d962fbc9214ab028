import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// A value a derived query showed, in the order its observer saw them.
private final class Seen<V: Sendable>: Sendable {
    let values = Lock<[V]>([])
    func append(_ value: V) { values.withLock { $0.append(value) } }
}

/// Everything at once on several threads: writers, a saver, a snapshotter, a creator of
/// derived queries and a reader. Every saved and snapshotted file, and every derived
/// value, is checked against the states the store actually published.
@Suite("Writers, savers, snapshots and derived queries at once", .threadsOfItsOwn)
struct StressTests {
    @Test(arguments: [UInt64(7), 8])
    func everythingAtOnce(seed: UInt64) throws {
        let directory = temporaryPath().directory
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try populatedLibraryStore(authorCount: 6, bookCount: 40)
        let published = PublishedStates(store)
        let firstRevision = store.revision
        let recorder = store.observe { published.record($0.current) }
        let file = try SnapshotFile(store: store, path: directory.appendingPathComponent("live.sqlite").path)
        let problems = Lock<[String]>([])
        let saved = Lock<[(UInt64, EntityState)]>([])
        let queries = Lock<[(id: String, query: DerivedQuery<Book?>, seen: Seen<Book?>, observation: Observation)]>([])
        let groups = Lock<[(author: Int, query: DerivedQuery<LiveRows<Book>>)]>([])
        let stop = Lock(false)

        // The threads other than the writers act once per revision the writers publish:
        // spinning instead made their work grow with the writers' time (on a busy machine,
        // tens of thousands of derived queries and saves, and a minute of both cores).
        @Sendable func nextRevision(after seen: inout UInt64) -> Bool {
            while !stop.withLock({ $0 }) {
                let revision = store.revision
                if revision != seen {
                    seen = revision
                    return true
                }
                Thread.sleep(forTimeInterval: 0.0005)
            }
            return false
        }

        var threads: [Thread] = []
        let finished = DispatchGroup()
        func spawn(_ body: @escaping @Sendable () -> Void) {
            finished.enter()
            let thread = Thread {
                body()
                finished.leave()
            }
            threads.append(thread)
        }
        for writer in 0..<3 {
            spawn {
                var random = SplitMix64(seed: seed &* 101 &+ UInt64(writer))
                for step in 0..<200 {
                    do { try randomWrite(store, random: &random, nextID: writer * 10_000 + step) } catch {
                        problems.withLock { $0.append("write: \(error)") }
                    }
                }
            }
        }
        spawn {
            // The saver: each save read back at once, before the next one changes the file.
            var seen: UInt64 = 0
            while nextRevision(after: &seen) {
                do {
                    let summary = try file.save()
                    let restored = try EntityState.readSnapshot(from: summary.path, schema: store.schema)
                    saved.withLock { $0.append((summary.revision, restored)) }
                } catch {
                    problems.withLock { $0.append("save: \(error)") }
                }
            }
        }
        spawn {
            var round = 0
            var seen: UInt64 = 0
            while nextRevision(after: &seen) {
                round += 1
                let path = directory.appendingPathComponent("snapshot-\(round % 3).sqlite").path
                do {
                    let summary = try store.snapshot(to: path)
                    let restored = try EntityState.readSnapshot(from: path, schema: store.schema)
                    saved.withLock { $0.append((summary.revision, restored)) }
                } catch {
                    problems.withLock { $0.append("snapshot: \(error)") }
                }
            }
        }
        spawn {
            var random = SplitMix64(seed: seed)
            var seen: UInt64 = 0
            while nextRevision(after: &seen) {
                let id = random.next() % 2 == 0 ? "b\(1 + random.next() % 40)" : "n\(random.next() % 3 * 10_000 + random.next() % 200)"
                let query = store.derived(books, id: id)
                let seen = Seen<Book?>()
                seen.append(query.value)
                let observation = query.observe { _, new in seen.append(new) }
                queries.withLock { $0.append((id, query, seen, observation)) }
                let author = Int(random.next() % 6) + 1
                let group = store.derived(books, where: \.authorID, equals: author)
                groups.withLock { $0.append((author, group)) }
            }
        }
        spawn {
            var seen: UInt64 = 0
            while nextRevision(after: &seen) {
                let state = store.state
                let violations = state.invariantViolations()
                if !violations.isEmpty { problems.withLock { $0.append("invariants at \(state.revision): \(violations)") } }
            }
        }
        for thread in threads { thread.start() }
        // The writers end on their own; the others when told.
        while store.revision < firstRevision + 400 { Thread.sleep(forTimeInterval: 0.005) }
        Thread.sleep(forTimeInterval: 0.05)
        stop.withLock { $0 = true }
        finished.wait()
        try file.save()
        recorder.cancel()

        #expect(problems.withLock { $0 } == [])
        let last = store.revision
        for (revision, restored) in saved.withLock({ $0 }) {
            let state = try #require(published[revision], "revision \(revision) was never published")
            #expect(sameLibraryRows(restored, state), "a file written as revision \(revision) holds another state")
        }
        let final = store.state
        for entry in queries.withLock({ $0 }) {
            #expect(entry.query.value == final[books].find(entry.id), "derived(books, id: \(entry.id)) is stale")
            let values = entry.seen.values.withLock { $0 }
            #expect(published.isMonotone(values, from: firstRevision, to: last) { $0[books].find(entry.id) },
                    "derived(books, id: \(entry.id)) showed values out of order: \(values.map { $0?.year ?? -1 })")
        }
        for entry in groups.withLock({ $0 }) {
            let expected = final[books].filter(\.authorID, equals: entry.author).map(\.id).sorted()
            #expect(entry.query.value.map(\.id).sorted() == expected, "derived(books, where: authorID == \(entry.author)) is stale")
        }
    }
}
