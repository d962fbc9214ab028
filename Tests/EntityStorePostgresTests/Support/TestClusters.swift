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
#endif
