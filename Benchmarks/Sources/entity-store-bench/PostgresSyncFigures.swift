import EntityStore
import EntityStorePostgres
import Foundation

/// The sync figures past two replicas: fan-out latency to 1, 4 and 8 listening replicas.
extension PostgresFigures {
    /// Numbers of listening replicas of the fan-out figures.
    static let fanOutReplicas = [1, 4, 8]
    /// Measured rounds per fan-out size (each gives one sample per replica).
    static let fanOutRounds = 200

    /// `sync_fanout_N_p50_ms` and `sync_fanout_N_p99_ms` for N in ``fanOutReplicas``:
    /// `writer` (on `sync`) commits a one-row update and pushes; N replicas, each its own
    /// store and `PostgresSync` running `start()`, see it in a derived query.
    func fanOutFigures(writer: EntityStore, sync: PostgresSync, target: PostgresTarget) throws -> (figures: [Figure], notes: [String]) {
        var figures: [Figure] = []
        var notes: [String] = []
        for replicas in Self.fanOutReplicas {
            progress("  sync_fanout_\(replicas): \(Self.fanOutRounds) rounds to \(replicas) listening replica\(replicas == 1 ? "" : "s")")
            let measured = try withFollowers(replicas, target: target) { followers in
                try commitToObserverLatencies(
                    writer: writer, sync: sync, followers: followers, rounds: Self.fanOutRounds, seed: 1_000 + UInt64(replicas), warmUp: 10)
            }
            let latencies = measured.all
            let notify = try notifyLatencies(rounds: Self.fanOutRounds, listeners: replicas)
            let (p50, p99) = (quantile(latencies, 0.5), quantile(latencies, 0.99))
            let (notifyP50, notifyP99) = (quantile(notify, 0.5), quantile(notify, 0.99))
            figures.append(Figure(
                name: "sync_fanout_\(replicas)_p50_ms", value: p50, unit: "ms (p50)", baseline: notifyP50, ratio: p50 / notifyP50,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter,
                baselineMeaning: "pg_notify to \(replicas) LISTEN connection\(replicas == 1 ? "" : "s"), p50"))
            figures.append(Figure(
                name: "sync_fanout_\(replicas)_p99_ms", value: p99, unit: "ms (p99)", baseline: notifyP99, ratio: p99 / notifyP99,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter,
                baselineMeaning: "pg_notify to \(replicas) LISTEN connection\(replicas == 1 ? "" : "s"), p99"))
            func spread(_ values: [Double]) -> String {
                "p50 \(String(quantile(values, 0.5), decimals: 2)), p99 \(String(quantile(values, 0.99), decimals: 2))"
            }
            notes.append(
                "sync_fanout_\(replicas): \(latencies.count) samples (\(Self.fanOutRounds) rounds × \(replicas)), max \(String(latencies.max() ?? .nan, decimals: 2)) ms; "
                    + "per round, ms from the commit: the writer's push() returned \(spread(measured.pushed)); "
                    + "the first replica saw it \(spread(measured.first)), the last \(spread(measured.last)); "
                    + "the bare NOTIFY's max \(String(notify.max() ?? .nan, decimals: 2)) ms")
        }
        return (figures, notes)
    }
}
