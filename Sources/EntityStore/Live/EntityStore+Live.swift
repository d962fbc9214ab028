import StoreCore

extension EntityStore {
    /// Starts `query` as a live query: its rows now, then, after each commit that changes
    /// them, the new rows and their ``LiveDiff``.
    ///
    /// An equality query is filed under its key: a commit wakes it only when one of its
    /// changed rows has or had that key (so 10,000 equality queries on distinct keys cost
    /// one changed row at most two wake-ups). Other queries are filed under their table.
    /// A restore (`replaceAll`) re-evaluates it once.
    /// An equality alone (no other filter, no sort, no limit) on a field with a grouped
    /// index copies no row: its rows are the index's group and the table's rows at its
    /// revision, and holding its value keeps that revision's changed parts alive, as
    /// holding an ``EntityState`` does.
    /// - Complexity: to create, O(1) for an equality alone on a grouped index, O(log n + k)
    ///   from another index (the source's, or an ordered index on the sort field with a
    ///   limit), O(n log n) by a scan otherwise. Per commit that wakes it, O(changed rows ×
    ///   log k), plus a refill when a full top-k window loses members (O(log n + rows
    ///   skipped) through an ordered index on the sort field; a scan of the source
    ///   otherwise).
    @inlinable
    public func live<E: Entity>(_ query: LiveQuery<E>) -> LiveList<E> {
        let origin = nextLiveOrigin()
        return registered(filing: query.filing) { state in
            let engine = query.makeRowEngine(query, state, origin)
            return LiveList<E>(
                current: engine.rows, revision: state.revision,
                initialDiff: { rows in LiveDiff.replacing(LiveRows(storage: SortedRows<E, UInt64>(), origin: 0, generation: 0), with: rows) },
                step: engine.update)
        }
    }

    /// A ``DerivedQuery`` over the rows of `query`, maintained by the live-query engine.
    @inlinable
    func derivedRows<E: Entity>(_ query: LiveQuery<E>) -> DerivedQuery<LiveRows<E>> {
        let origin = nextLiveOrigin()
        return registered(filing: query.filing) { state in
            let engine = query.makeRowEngine(query, state, origin)
            return DerivedQuery<LiveRows<E>>(initial: engine.rows(), revision: state.revision) { commit, _ in
                engine.update(commit).map { $0.value }
            }
        }
    }

    /// Builds a watcher with `make` from the last published state and files it as
    /// `filing` says, atomically with respect to commits (see
    /// ``registered(table:ids:_:)``).
    @usableFromInline
    func registered<Watcher: LiveRegistrable>(filing: WatchFiling, _ make: (EntityState) -> Watcher) -> Watcher {
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
protocol LiveRegistrable: ChangeWatcher {
    /// Sets the store version the watcher's value reflects (called while the store's
    /// lock holds the state it was built from).
    func start(atVersion version: UInt64)
    func setUnregister(_ action: @escaping @Sendable () -> Void)
}

extension Live: LiveRegistrable {}
extension DerivedQuery: LiveRegistrable {}

/// Where a watcher is filed in the ``WatcherRegistry``.
@usableFromInline
enum WatchFiling: Sendable {
    /// Under every change of a table.
    case table(String)
    /// Under one value of one field of a table.
    case key(table: String, field: KeyPathKey, key: WatchKey, reader: ChangedKeyReader)
}

extension WatcherRegistry {
    /// Files `watcher` as `filing` says (with `token`, or a new one); returns the token to unregister with. O(1).
    @discardableResult
    func register(_ watcher: any ChangeWatcher, filing: WatchFiling, token: UInt64? = nil) -> UInt64 {
        switch filing {
        case let .table(table): registerTable(watcher, table: table, token: token)
        case let .key(table, field, key, reader):
            registerKey(watcher, table: table, field: field, key: key, reader: reader, token: token)
        }
    }

    /// Removes a registration made by ``register(_:filing:)``. O(1).
    func unregister(_ token: UInt64, filing: WatchFiling) {
        switch filing {
        case let .table(table): unregister(token, table: table, ids: [])
        case let .key(table, field, key, _): unregisterKey(token, table: table, field: field, key: key)
        }
    }
}

extension LiveQuery {
    /// Where the query's watcher is filed: under its key for an equality source, else
    /// under its table.
    @usableFromInline
    var filing: WatchFiling {
        guard let key = source.key else { return .table(table.name) }
        return .key(table: table.name, field: key.field, key: key.key, reader: key.reader)
    }
}

/// Distinct origins tell the values of one live query from another's in O(1).
private let liveOrigins = Lock<UInt64>(0)

@usableFromInline
func nextLiveOrigin() -> UInt64 {
    liveOrigins.withLock { counter in
        counter += 1
        return counter
    }
}
