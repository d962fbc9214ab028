import HashTreeCollections
import StoreCore

/// Something that re-reads its value when a commit touches what it watches.
@usableFromInline
protocol ChangeWatcher: AnyObject, Sendable {
    func refresh(_ commit: DeliveredCommit)
}

/// Reads one field of one table's changed rows: the key each row had before a commit and
/// the key it has after, so that key-filed watchers wake only for the values rows leave
/// or enter. Made by an inlinable initializer, so its work runs specialized for the
/// entity and key types where the query is built.
@usableFromInline
struct ChangedKeyReader: Sendable {
    /// Appends to its last argument the old and the new key of every row of the table
    /// named by the second that the commit changed (once when they are equal).
    /// O(changed rows of the table).
    @usableFromInline let appendChangedKeys: @Sendable (DeliveredCommit, String, inout [WatchKey]) -> Void

    /// The reader of the field `key` reads from entities of `E`.
    @inlinable
    init<E: Entity, Key: Hashable & Sendable>(_ key: @escaping @Sendable (E) -> Key) {
        appendChangedKeys = { commit, table, keys in
            guard let changed = commit.table(table, as: E.self) else { return }
            // By index: the field is read from the element in place, where a `for-in`
            // copies each element out (a retain of every reference it holds) first.
            let inserted = changed.inserted, updated = changed.updated
            for index in inserted.indices { keys.append(WatchKey(key(inserted[index].value))) }
            for index in updated.indices {
                let before = key(updated[index].previous)
                keys.append(WatchKey(before))
                let after = key(updated[index].row.value)
                if after != before { keys.append(WatchKey(after)) }
            }
            for old in changed.removed.values { keys.append(WatchKey(key(old))) }
        }
    }
}

/// Routes each commit to the watchers of exactly the IDs and keys it changed.
///
/// Watchers of one entity are filed under (table, ID), so a commit that changes k
/// entities does k hash lookups, however many watchers exist: one changed entity among
/// 100,000 watched ones wakes only its own watchers. Watchers of one value of a field
/// (live equality queries) are filed under (table, field, value): a changed row wakes the
/// watchers of its key before and after the commit, at most two keys per field. Watchers
/// of a whole table (ranges, top-k, aggregates) are filed under the table.
@usableFromInline
final class WatcherRegistry: Sendable {
    /// A registration's watcher, held weakly (a watcher unregisters in its deinit, which
    /// can run while a commit is dispatched). A class with a `weak let`: collecting it
    /// copies a strong reference, where copying a struct's weak reference goes through
    /// the runtime, and reading an immutable reference needs no exclusivity check.
    private final class Box: Sendable {
        weak let watcher: (any ChangeWatcher)?

        init(watcher: any ChangeWatcher) {
            self.watcher = watcher
        }
    }

    /// The watchers of one field's values, with the reader that finds the keys a commit's
    /// changed rows leave and enter.
    private struct FieldWatchers: Sendable {
        let reader: ChangedKeyReader
        var byKey: [WatchKey: [UInt64: Box]] = [:]
    }

    private struct Registry: Sendable {
        var byID: [String: [WatchKey: [UInt64: Box]]] = [:]
        var byTable: [String: [UInt64: Box]] = [:]
        var byKey: [String: [KeyPathKey: FieldWatchers]] = [:]
        /// Watchers whose watched IDs change over time (the referenced rows of a live
        /// join), by token: their table and IDs, also filed in `byID`.
        var dynamic: [UInt64: DynamicIDs] = [:]
        var nextToken: UInt64 = 0
    }

    private struct DynamicIDs: Sendable {
        let table: String
        let box: Box
        var ids: Set<WatchKey>
    }

    /// A fresh token, for a watcher filed in several ways (each with this token, so a
    /// commit touching several of them wakes it once). O(1).
    func makeToken() -> UInt64 {
        registry.withLock { registry in
            defer { registry.nextToken += 1 }
            return registry.nextToken
        }
    }

    /// Files `watcher` under `ids` of `table` with `token`, IDs that
    /// ``updateDynamicIDs(_:adding:removing:)`` changes later. O(ids).
    func registerDynamicIDs(_ watcher: any ChangeWatcher, token: UInt64, table: String, ids: some Sequence<WatchKey>) {
        registry.withLock { registry in
            let box = Box(watcher: watcher)
            var entry = DynamicIDs(table: table, box: box, ids: [])
            for id in ids where entry.ids.insert(id).inserted { registry.byID[table, default: [:]][id, default: [:]][token] = box }
            registry.dynamic[token] = entry
        }
    }

    /// Adds and removes watched IDs of a registration made by
    /// ``registerDynamicIDs(_:token:table:ids:)``. O(changed IDs).
    func updateDynamicIDs(_ token: UInt64, adding: [WatchKey], removing: [WatchKey]) {
        registry.withLock { registry in
            guard var entry = registry.dynamic[token] else { return }
            for id in removing where entry.ids.remove(id) != nil {
                registry.byID[entry.table]?[id]?.removeValue(forKey: token)
                if registry.byID[entry.table]?[id]?.isEmpty == true { registry.byID[entry.table]?.removeValue(forKey: id) }
            }
            for id in adding where entry.ids.insert(id).inserted {
                registry.byID[entry.table, default: [:]][id, default: [:]][token] = entry.box
            }
            registry.dynamic[token] = entry
        }
    }

    /// Removes a registration made by ``registerDynamicIDs(_:token:table:ids:)``. O(IDs).
    func unregisterDynamicIDs(_ token: UInt64) {
        let ids = registry.withLock { $0.dynamic[token]?.ids ?? [] }
        updateDynamicIDs(token, adding: [], removing: Array(ids))
        registry.withLock { _ = $0.dynamic.removeValue(forKey: token) }
    }

    private let registry = Lock(Registry())

    /// A watcher due for a refresh, with its registration token.
    private struct Due {
        let token: UInt64
        let watcher: any ChangeWatcher
    }

    /// Files `watcher` under each of `ids` of `table`; returns the token to unregister with.
    /// O(ids).
    func register(_ watcher: any ChangeWatcher, table: String, ids: [WatchKey], token given: UInt64? = nil) -> UInt64 {
        registry.withLock { registry in
            let token = given ?? registry.nextToken
            if given == nil { registry.nextToken += 1 }
            for id in ids { registry.byID[table, default: [:]][id, default: [:]][token] = Box(watcher: watcher) }
            return token
        }
    }

    /// Files `watcher` under every change of `table`. O(1).
    func registerTable(_ watcher: any ChangeWatcher, table: String, token given: UInt64? = nil) -> UInt64 {
        registry.withLock { registry in
            let token = given ?? registry.nextToken
            if given == nil { registry.nextToken += 1 }
            registry.byTable[table, default: [:]][token] = Box(watcher: watcher)
            return token
        }
    }

    /// Files `watcher` under the value `key` of the field `field` of `table`; `reader` finds
    /// the old and new keys of changed rows (the first registration of a field keeps its
    /// reader). O(1).
    func registerKey(
        _ watcher: any ChangeWatcher, table: String, field: KeyPathKey, key: WatchKey, reader: ChangedKeyReader,
        token given: UInt64? = nil
    ) -> UInt64 {
        registry.withLock { registry in
            let token = given ?? registry.nextToken
            if given == nil { registry.nextToken += 1 }
            registry.byKey[table, default: [:]][field, default: FieldWatchers(reader: reader)]
                .byKey[key, default: [:]][token] = Box(watcher: watcher)
            return token
        }
    }

    /// Removes a registration made by ``registerKey(_:table:field:key:reader:)``. O(1).
    func unregisterKey(_ token: UInt64, table: String, field: KeyPathKey, key: WatchKey) {
        registry.withLock { registry in
            registry.byKey[table]?[field]?.byKey[key]?.removeValue(forKey: token)
            guard registry.byKey[table]?[field]?.byKey[key]?.isEmpty == true else { return }
            registry.byKey[table]?[field]?.byKey.removeValue(forKey: key)
            if registry.byKey[table]?[field]?.byKey.isEmpty == true { registry.byKey[table]?.removeValue(forKey: field) }
        }
    }

    /// The number of (table, field, value) keys watched, for tests.
    var watchedKeyCount: Int {
        registry.withLock { $0.byKey.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.byKey.count } } }
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
    /// - Complexity: O(changed IDs × watched fields of their table + woken watchers).
    func dispatch(_ changes: Changes<EntityState>) {
        let commit = DeliveredCommit(changes)
        let changeSet = changes.current.changeSet
        var due: [Due] = registry.withLock { registry in
            var due: [Due] = []
            due.reserveCapacity(8)
            func collect(_ boxes: [UInt64: Box]?) {
                guard let boxes else { return }
                for (token, box) in boxes { if let watcher = box.watcher { due.append(Due(token: token, watcher: watcher)) } }
            }
            // A restore, or a raw core commit whose change set does not lead from the
            // previous state (an undo), may have changed anything: every watcher wakes.
            if commit.replacesAll {
                for tables in registry.byID.values { for boxes in tables.values { collect(boxes) } }
                for boxes in registry.byTable.values { collect(boxes) }
                for fields in registry.byKey.values {
                    for field in fields.values { for boxes in field.byKey.values { collect(boxes) } }
                }
            } else {
                var keys: [WatchKey] = []
                for (table, tableChanges) in changeSet.tables {
                    collect(registry.byTable[table])
                    if let fields = registry.byKey[table] {
                        for field in fields.values {
                            keys.removeAll(keepingCapacity: true)
                            field.reader.appendChangedKeys(commit, table, &keys)
                            for key in keys { collect(field.byKey[key]) }
                        }
                    }
                    guard let watched = registry.byID[table], !watched.isEmpty else { continue }
                    tableChanges.forEachChangedKey { collect(watched[$0]) }
                }
            }
            return due
        }
        // In registration order, each watcher once (one may watch several changed IDs).
        if due.count > 1 { due.sort { $0.token < $1.token } }
        var previous: UInt64?
        for entry in due where entry.token != previous {
            previous = entry.token
            entry.watcher.refresh(commit)
        }
    }
}
