#if PostgreSQL
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// Servers beyond the run's one cluster, for the tests of standbys, failover and pooling,
/// each started by `scripts/postgres-cluster` in a temporary directory its watcher removes
/// once this process is gone. The shared ones start on first use, once per run, so tests
/// that do not need them pay nothing.
enum TestClusters {
    /// pgbouncer's executable, if installed.
    static let pgbouncer: String? = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether the standby and failover tests run: they start clusters of their own from the
    /// server binaries (under CI, missing ones fail them).
    static var enabled: Bool { TestServer.serverBinaries != nil || TestServer.isCI }
    /// Whether the pgbouncer tests run.
    static var pgbouncerEnabled: Bool { (TestServer.serverBinaries != nil && pgbouncer != nil) || TestServer.isCI }

    /// A hot standby of the run's throwaway cluster (async streaming replication), started once.
    static let standby = LazyServer { () async throws -> String in
        _ = try await ThrowawayCluster.shared.url()
        return try await script(["standby", ThrowawayCluster.shared.directory, directory("standby"), String(getpid())])
    }

    /// pgbouncer in transaction pooling mode in front of the run's throwaway cluster, started once.
    static let bouncer = LazyServer { () async throws -> String in
        _ = try await ThrowawayCluster.shared.url()
        return try await script(["pgbouncer", ThrowawayCluster.shared.directory, directory("pgbouncer"), String(getpid())])
    }

    /// The run's throwaway cluster's URL (started if not yet), even when
    /// `ENTITYSTORE_POSTGRES_URL` names another server: its standby and pooler need its directory.
    static func primaryURL() async throws -> String {
        try await ThrowawayCluster.shared.url()
    }

    /// A fresh temporary directory's path for a server.
    static func directory(_ kind: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("entitystore-\(kind)-\(UUID().uuidString)").path
    }

    /// Runs the cluster script on a thread of its own; the URL it printed.
    @discardableResult
    static func script(_ arguments: [String]) async throws -> String {
        let result = try await onOwnThread { try clusterScript(arguments) }
        guard result.status == 0 else {
            throw ChildFailure("postgres-cluster \(arguments[0]) failed: \(result.output.split(separator: "\n").suffix(5).joined(separator: " | "))")
        }
        return result.output.split(separator: "\n").last.map(String.init) ?? ""
    }
}

/// A server started once per run, on first use, shared by the tests that need it.
actor LazyServer {
    private let start: @Sendable () async throws -> String
    private var starting: Task<String, any Error>?

    init(_ start: @escaping @Sendable () async throws -> String) {
        self.start = start
    }

    /// The server's URL, starting it on the first call.
    func url() async throws -> String {
        if let starting { return try await starting.value }
        let task = Task { try await start() }
        starting = task
        return try await task.value
    }
}

/// A primary and its hot standby of their own, for a test that kills the primary: the
/// primary is a clone of the run's cluster (a base backup, faster than initdb).
struct ClusterPair {
    let primaryDirectory: String
    let standbyDirectory: String
    let primaryURL: String
    let standbyURL: String

    /// Starts both; with `synchronous`, the primary waits for the standby at every commit.
    static func start(synchronous: Bool = false) async throws -> ClusterPair {
        _ = try await ThrowawayCluster.shared.url()
        let primaryDirectory = TestClusters.directory("primary")
        let standbyDirectory = TestClusters.directory("standby")
        let pid = String(getpid())
        let primaryURL = try await TestClusters.script(["clone", ThrowawayCluster.shared.directory, primaryDirectory, pid])
        let standbyURL = try await TestClusters.script(
            ["standby", primaryDirectory, standbyDirectory, pid] + (synchronous ? ["sync"] : []))
        return ClusterPair(primaryDirectory: primaryDirectory, standbyDirectory: standbyDirectory, primaryURL: primaryURL, standbyURL: standbyURL)
    }

    /// `postgres://user:password@primary,standby/db?target_session_attrs=read-write`.
    func failoverURL(_ parameters: String = "target_session_attrs=read-write") throws -> String {
        let primary = try PostgresTarget(url: primaryURL, environment: [:])
        let standby = try PostgresTarget(url: standbyURL, environment: [:])
        return "postgres://\(primary.username):\(primary.password ?? "")@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/postgres?\(parameters)"
    }

    /// Kills the primary at once (`pg_ctl stop -m immediate`), as a crash.
    func killPrimary() async throws { try await TestClusters.script(["halt", primaryDirectory]) }

    /// Promotes the standby (`pg_ctl promote`, waiting until it accepts writes).
    func promoteStandby() async throws { try await TestClusters.script(["promote", standbyDirectory]) }

    /// Stops both and removes their directories.
    func stop() async {
        _ = try? await TestClusters.script(["stop", standbyDirectory])
        _ = try? await TestClusters.script(["stop", primaryDirectory])
    }
}
#endif
