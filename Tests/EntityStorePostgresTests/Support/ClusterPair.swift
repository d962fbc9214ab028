#if PostgreSQL
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

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
