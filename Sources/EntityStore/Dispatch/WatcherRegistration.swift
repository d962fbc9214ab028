import StoreCore

extension EntityStore {
    /// Builds a watcher with `make` from the last published state and files it in the
    /// watcher registry as `filing` says, atomically with respect to commits: every commit
    /// published after the state `make` read reaches the watcher. (It ignores deliveries of
    /// that state and earlier ones, which may still be on their way.)
    ///
    /// `make` runs first outside the store's lock; if a commit was published meanwhile, it
    /// runs again under the lock, where none can be.
    /// - Complexity: one or two runs of `make`, plus O(filed keys) to register.
    @usableFromInline
    func registered<Watcher: RegistrableWatcher>(filing: WatchFiling, _ make: (EntityState) -> Watcher) -> Watcher {
        let state = core.committedState
        let early = make(state)
        let watchers = watchers
        let core = core
        let (watcher, token) = core.withCommittedState { current in
            let watcher = current == state ? early : make(current)
            watcher.start(atVersion: core.version)
            return (watcher, watchers.register(watcher, filing: filing))
        }
        watcher.setUnregister { watchers.unregister(token, filing: filing) }
        return watcher
    }
}

/// A watcher that can be told how to unregister itself when it is released.
@usableFromInline
protocol RegistrableWatcher: ChangeWatcher {
    /// Sets the store version the watcher's value reflects (called while the store's
    /// lock holds the state it was built from).
    func start(atVersion version: UInt64)
    func setUnregister(_ action: @escaping @Sendable () -> Void)
}

extension Live: RegistrableWatcher {}
extension DerivedQuery: RegistrableWatcher {}

/// Where a watcher is filed in the ``WatcherRegistry``.
@usableFromInline
enum WatchFiling: Sendable {
    /// Under every change of a table.
    case table(String)
    /// Under changes of some entities of a table.
    case ids(table: String, ids: [WatchKey])
    /// Under one value of one field of a table.
    case key(table: String, field: KeyPathKey, key: WatchKey, reader: ChangedKeyReader)
}

extension WatcherRegistry {
    /// Files `watcher` as `filing` says (with `token`, or a new one); returns the token to unregister with. O(1), O(IDs) for `.ids`.
    @discardableResult
    func register(_ watcher: any ChangeWatcher, filing: WatchFiling, token: UInt64? = nil) -> UInt64 {
        switch filing {
        case let .table(table): registerTable(watcher, table: table, token: token)
        case let .ids(table, ids): register(watcher, table: table, ids: ids, token: token)
        case let .key(table, field, key, reader):
            registerKey(watcher, table: table, field: field, key: key, reader: reader, token: token)
        }
    }

    /// Removes a registration made by ``register(_:filing:)``. O(1), O(IDs) for `.ids`.
    func unregister(_ token: UInt64, filing: WatchFiling) {
        switch filing {
        case let .table(table): unregister(token, table: table, ids: [])
        case let .ids(table, ids): unregister(token, table: table, ids: ids)
        case let .key(table, field, key, _): unregisterKey(token, table: table, field: field, key: key)
        }
    }
}
