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
            // A live query's rows are equal exactly when they are the same change's (O(1)):
            // the engine applies every change a change set reports, ±0 and NaN included.
            return DerivedQuery<LiveRows<E>>(initial: engine.rows(), revision: state.revision, isSame: { _, new, old in new == old }) { commit, _ in
                engine.update(commit).map { $0.value }
            }
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
