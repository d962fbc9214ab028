import HashTreeCollections
import StoreCore

/// Something that re-reads its value when a commit touches what it watches.
protocol ChangeWatcher: AnyObject, Sendable {
    func refresh(_ changes: Changes<EntityState>)
}

/// Routes each commit to the watchers of exactly the IDs it changed.
///
/// Watchers of one entity are filed under (table, ID), so a commit that changes k
/// entities does k hash lookups, however many watchers exist: one changed entity among
/// 100,000 watched ones wakes only its own watchers. Watchers of a whole table (index and
/// range queries) are filed under the table.
final class WatcherRegistry: Sendable {
    private struct Box: Sendable {
        weak var watcher: (any ChangeWatcher)?
    }

    private struct Registry: Sendable {
        var byID: [String: [WatchKey: [UInt64: Box]]] = [:]
        var byTable: [String: [UInt64: Box]] = [:]
        var nextToken: UInt64 = 0
    }

    private let registry = Lock(Registry())

    /// A watcher due for a refresh, with its registration token.
    private struct Due {
        let token: UInt64
        let watcher: any ChangeWatcher
    }

    /// Files `watcher` under each of `ids` of `table`; returns the token to unregister with.
    /// O(ids).
    func register(_ watcher: any ChangeWatcher, table: String, ids: [WatchKey]) -> UInt64 {
        registry.withLock { registry in
            let token = registry.nextToken
            registry.nextToken += 1
            for id in ids { registry.byID[table, default: [:]][id, default: [:]][token] = Box(watcher: watcher) }
            return token
        }
    }

    /// Files `watcher` under every change of `table`. O(1).
    func registerTable(_ watcher: any ChangeWatcher, table: String) -> UInt64 {
        registry.withLock { registry in
            let token = registry.nextToken
            registry.nextToken += 1
            registry.byTable[table, default: [:]][token] = Box(watcher: watcher)
            return token
        }
    }

    /// Removes a registration. O(ids).
    func unregister(_ token: UInt64, table: String, ids: [WatchKey]) {
        registry.withLock { registry in
            for id in ids {
                registry.byID[table]?[id]?.removeValue(forKey: token)
                if registry.byID[table]?[id]?.isEmpty == true { registry.byID[table]?.removeValue(forKey: id) }
            }
            registry.byTable[table]?.removeValue(forKey: token)
        }
    }

    /// The number of (table, ID) keys watched, for tests.
    var watchedIDCount: Int { registry.withLock { $0.byID.values.reduce(0) { $0 + $1.count } } }

    /// Wakes the watchers of what `changes` touched, outside the lock, each once.
    /// - Complexity: O(changed IDs + woken watchers).
    func dispatch(_ changes: Changes<EntityState>) {
        let changeSet = changes.current.changeSet
        let due: [Due] = registry.withLock { registry in
            var due: [Due] = []
            func collect(_ boxes: [UInt64: Box]?) {
                guard let boxes else { return }
                for (token, box) in boxes { if let watcher = box.watcher { due.append(Due(token: token, watcher: watcher)) } }
            }
            if changeSet.replacedAll {
                for tables in registry.byID.values { for boxes in tables.values { collect(boxes) } }
                for boxes in registry.byTable.values { collect(boxes) }
            } else {
                for (table, tableChanges) in changeSet.tables {
                    collect(registry.byTable[table])
                    guard let watched = registry.byID[table], !watched.isEmpty else { continue }
                    tableChanges.forEachChangedKey { collect(watched[$0]) }
                }
            }
            return due
        }
        // In registration order, each watcher once (one may watch several changed IDs).
        let ordered = due.count < 2 ? due : due.sorted { $0.token < $1.token }
        var previous: UInt64?
        for entry in ordered where entry.token != previous {
            previous = entry.token
            entry.watcher.refresh(changes)
        }
    }
}
