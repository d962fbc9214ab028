import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import SnapshotFixtures
import Testing

/// What the library's readers made of one file.
private struct Readings {
    var typed: Result<EntityState, any Error>
    var dynamic: Result<EntityStore, any Error>
    var metadata: Result<StoreMetadata, any Error>
    var report: VerificationReport
    var slowest: Duration
}

private func read(_ path: String, schema: Schema) -> Readings {
    let clock = ContinuousClock()
    var slowest = Duration.zero
    func timed<T>(_ body: () throws -> T) -> Result<T, any Error> {
        let start = clock.now
        defer { slowest = max(slowest, clock.now - start) }
        return Result { try body() }
    }
    let typed = timed { try EntityState.readSnapshot(from: path, schema: schema) }
    let dynamic = timed { try EntityStore.restoringDynamic(from: path) }
    let metadata = timed { try Snapshot.metadata(at: path) }
    let start = clock.now
    let report = Snapshot.verify(at: path)
    slowest = max(slowest, clock.now - start)
    return Readings(typed: typed, dynamic: dynamic, metadata: metadata, report: report, slowest: slowest)
}

private func isSchemaMismatch(_ error: any Error) -> Bool {
    if case .schemaMismatch? = error as? SnapshotError { return true }
    return false
}

@Suite("Hostile files through every reader")
struct HostileFileTests {
    // The time limit only catches a reader that hangs; durations are Benchmarks' business.
    @Test("each gets a clear error or a correct answer, never a hang, and verify agrees with restore", .timeLimit(.minutes(10)))
    func everyKind() throws {
        try withTemporaryDirectory { directory in
            let source = directory.appendingPathComponent("source.sqlite").path
            let store = try populatedLibraryStore(authorCount: 3, bookCount: 20)
            try store.write { tx in try tx[samples].insert(sample(2)) }
            try store.snapshot(to: source)
            let hostile = try HostileSnapshots.make(from: source, in: directory.path)
            #expect(hostile.count >= 25)
            for sample in hostile {
                let readings = read(sample.path, schema: store.schema)
                for case let .failure(error) in [readings.typed.map { _ in () }, readings.dynamic.map { _ in () }, readings.metadata.map { _ in () }] {
                    #expect(error is SnapshotError, "\(sample.name): \(type(of: error)): \(error)")
                    #expect(String(describing: error).count < 1_000, "\(sample.name): a long error: \(error)")
                }
                if readings.report.isSound {
                    // Sound means every restore accepts it, and finds what the metadata says.
                    if case let .failure(error) = readings.dynamic { Issue.record("\(sample.name): verify says OK, the dynamic restore fails: \(error)") }
                    // A typed restore may still refuse a file whose tables its schema lacks.
                    if case let .failure(error) = readings.typed, !isSchemaMismatch(error) {
                        Issue.record("\(sample.name): verify says OK, the typed restore fails: \(error)")
                    }
                } else {
                    #expect(!readings.report.problems.isEmpty)
                    if case .success = readings.dynamic, case .success = readings.typed, readings.report.problems.allSatisfy({ !$0.contains("reference") }) {
                        Issue.record("\(sample.name): every restore accepts it, verify says: \(readings.report.problems)")
                    }
                }
            }
        }
    }
}
