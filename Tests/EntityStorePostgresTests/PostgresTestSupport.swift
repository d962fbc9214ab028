#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import Foundation
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use: `ENTITYSTORE_POSTGRES_URL`. `.ci/run` starts a
/// throwaway one; without it the tests skip locally and fail under CI (`CI` set).
enum TestServer {
    static let url = ProcessInfo.processInfo.environment["ENTITYSTORE_POSTGRES_URL"]
    static let isCI = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false

    /// Whether the PostgreSQL tests run: with a server, or under CI (where a missing one fails them).
    static var enabled: Bool { url != nil || isCI }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "ENTITYSTORE_POSTGRES_URL is not set: under CI, .ci/run must start a PostgreSQL cluster and export it"
        }
    }

    /// A target in a schema of its own (dropped by `drop`).
    static func target(_ prefix: String = "t") throws -> PostgresTarget {
        guard let url else { throw Missing() }
        return try PostgresTarget(url: url, schema: "\(prefix)_\(UInt32.random(in: 0...UInt32.max))")
    }

    /// Runs `body` on a plain connection to the server.
    static func withConnection<R: Sendable>(_ target: PostgresTarget, _ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await target.withConnection(body)
    }

    /// Drops the target's schema.
    static func drop(_ target: PostgresTarget) async {
        _ = try? await withConnection(target) { connection in
            try await SQL.run(connection, "DROP SCHEMA IF EXISTS \(SQL.quote(target.schema)) CASCADE")
        }
    }

    /// The rows of a query, as text.
    static func rows(_ target: PostgresTarget, _ sql: String) async throws -> [[String?]] {
        try await withConnection(target) { connection in
            try await SQL.rows(connection, sql).map { row in
                try row.map { cell -> String? in
                    switch try CellReader.value(cell, table: "") {
                    case .null: return nil
                    case let .integer(number): return String(number)
                    case let .double(number): return String(number)
                    case let .bool(flag): return flag ? "t" : "f"
                    case let .text(text): return text
                    case let .bytes(bytes): return bytes.map { String($0) }.joined(separator: ",")
                    }
                }
            }
        }
    }
}

/// The comment a skipped PostgreSQL test shows.
let postgresSkipNote: Comment = """
    PostgreSQL not configured: start a throwaway server with `dir=$(mktemp -d) && \
    export ENTITYSTORE_POSTGRES_URL=$(.ci/postgres-cluster start $dir)` (stop it with `.ci/postgres-cluster stop $dir`)
    """
/// A task executor with a thread of its own, for the tests that measure time.
///
/// The whole suite shares the concurrency pool's threads (two on a two-core machine), and
/// many of its tests block one while a child process runs: a continuation queued behind
/// them can wait for a minute, which a test of a one-second connect timeout would take for
/// a bug. A test run with this executor as preference resumes on its own thread.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable` is safe: `jobs` is only touched with `condition` locked; the
    // thread only runs jobs it took out of `jobs` under that lock.
    static let shared = DedicatedThreadExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = "timing tests"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}

/// Runs `body` on ``DedicatedThreadExecutor/shared`` (and the child tasks it starts).
func onDedicatedThread<R: Sendable>(_ body: () async throws -> R) async throws -> R {
    try await withTaskExecutorPreference(DedicatedThreadExecutor.shared, operation: body)
}
#endif
