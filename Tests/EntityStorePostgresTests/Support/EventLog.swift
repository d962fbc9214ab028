#if PostgreSQL
@testable import EntityStorePostgres
import Foundation
import StoreCore

/// Collects a sync's events, for a test to look at.
final class EventLog: Sendable {
    private let events = Lock<[PostgresSyncEvent]>([])
    private let task: Task<Void, Never>

    init(_ sync: PostgresSync) {
        let events = self.events
        let stream = sync.events
        task = Task { for await event in stream { events.withLock { $0.append(event) } } }
    }

    var all: [PostgresSyncEvent] { events.withLock { $0 } }
    var reloads: [String] { all.compactMap { if case let .reloaded(_, reason) = $0 { reason } else { nil } } }
    var failures: [PostgresStoreError] { all.compactMap { if case let .failed(error) = $0 { error } else { nil } } }
}
#endif
