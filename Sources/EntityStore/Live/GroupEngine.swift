import HashTreeCollections
import StoreCore

/// The incremental engine of a live group-by: per group, the row count, the running sum
/// and an ordered multiset of the values (so the minimum and maximum stay right when the
/// extreme row leaves). Per commit, each changed row's old contribution (read from the
/// change set's previous value) leaves its group and its new one enters: O(changed rows
/// × log g) for groups of g rows.
struct GroupEngine<E: Entity, Key: Hashable & Sendable, Value: LiveAggregatable>: Sendable {
    /// One group's running state. Values are keyed by (value, row sequence): distinct per
    /// row, ordered by value.
    struct Group: Sendable {
        var count = 0
        var sum = Value.liveZero
        var values = SortedMap<OrderedIndexKey<Value>, E.ID>()

        var aggregate: GroupAggregate<Value>? {
            guard let first = values.first, let last = values.last else { return nil }
            return GroupAggregate(count: count, sum: sum, min: first.key.key, max: last.key.key)
        }
    }

    let query: LiveQuery<E>
    let key: any KeyPath<E, Key> & Sendable
    let value: any KeyPath<E, Value> & Sendable
    private var groups: [Key: Group] = [:]
    private(set) var values = GroupValues<Key, Value>()

    init(query: LiveQuery<E>, key: any KeyPath<E, Key> & Sendable, value: any KeyPath<E, Value> & Sendable, state: EntityState) {
        self.query = query
        self.key = key
        self.value = value
        if let storage = state.storage(named: query.table.name, as: E.self) { fill(from: storage) }
    }

    private mutating func fill(from storage: TableStorage<E>) {
        groups = [:]
        func add(_ row: Row<E>) {
            if query.qualifies(row.value) { insert(row.value, sequence: row.sequence) }
        }
        if let candidates = query.source.candidates(in: storage) {
            for id in candidates { if let row = storage.rows[id] { add(row) } }
        } else {
            for (_, id) in storage.order { if let row = storage.rows[id] { add(row) } }
        }
        var values = GroupValues<Key, Value>()
        for (key, group) in groups { values.groups[key] = group.aggregate }
        self.values = values
    }

    private mutating func insert(_ entity: E, sequence: UInt64) {
        let amount = entity[keyPath: value], group = entity[keyPath: key]
        groups[group, default: Group()].add(amount, sequence: sequence, id: entity.id)
    }

    mutating func apply(_ changes: Changes<EntityState>) -> GroupDiff<Key, Value>? {
        let table = query.table.name
        guard let storage = changes.current.storage(named: table, as: E.self) else { return nil }
        if changes.current.changeSet.replacedAll || !changes.current.followsByChangeSet(changes.previous) {
            let old = values
            fill(from: storage)
            return Self.diff(from: old, to: values)
        }
        guard let tableChanges = changes.current.changeSet.tables[table] as? TableChanges<E>, !tableChanges.isEmpty
        else { return nil }
        let previousRows = changes.previous.storage(named: table, as: E.self)?.rows
        var before: [Key: GroupAggregate<Value>?] = [:]
        func touch(_ key: Key) {
            if before[key] == nil { before[key] = .some(values.groups[key]) }
        }
        func leave(_ id: E.ID, _ old: E) {
            guard query.qualifies(old), let sequence = previousRows?[id]?.sequence else { return }
            let key = old[keyPath: self.key]
            touch(key)
            let amount = old[keyPath: value]
            groups[key]?.remove(amount, sequence: sequence)
            if groups[key]?.count == 0 { groups.removeValue(forKey: key) }
        }
        func enter(_ id: E.ID) {
            guard let row = storage.rows[id], query.qualifies(row.value) else { return }
            touch(row.value[keyPath: key])
            insert(row.value, sequence: row.sequence)
        }
        for (id, old) in tableChanges.updated { leave(id, old) }
        for (id, old) in tableChanges.removed { leave(id, old) }
        for id in tableChanges.updated.keys { enter(id) }
        for id in tableChanges.inserted { enter(id) }

        var diff = GroupDiff<Key, Value>()
        for (key, old) in before {
            let new = groups[key]?.aggregate
            guard new != old else { continue }
            values.groups[key] = new
            diff.changes.append(.init(key: key, old: old, new: new))
        }
        return diff.isEmpty ? nil : diff
    }

    /// The changes from `old` to `new`, group by group. O(groups).
    static func diff(from old: GroupValues<Key, Value>, to new: GroupValues<Key, Value>) -> GroupDiff<Key, Value>? {
        var diff = GroupDiff<Key, Value>()
        for (key, aggregate) in new.groups where old.groups[key] != aggregate {
            diff.changes.append(.init(key: key, old: old.groups[key], new: aggregate))
        }
        for (key, aggregate) in old.groups where new.groups[key] == nil {
            diff.changes.append(.init(key: key, old: aggregate, new: nil))
        }
        return diff.isEmpty ? nil : diff
    }
}

extension GroupEngine.Group {
    mutating func add(_ value: Value, sequence: UInt64, id: E.ID) {
        count += 1
        sum = Value.liveAdding(sum, value)
        values.updateValue(id, forKey: OrderedIndexKey(key: value, sequence: sequence))
    }

    mutating func remove(_ value: Value, sequence: UInt64) {
        guard values.removeValue(forKey: OrderedIndexKey(key: value, sequence: sequence)) != nil else { return }
        count -= 1
        sum = Value.liveSubtracting(sum, value)
    }
}

/// A live group-by: ``GroupValues`` and their ``GroupDiff`` per commit.
public typealias LiveGroups<Key: Hashable & Sendable, Value: LiveAggregatable> = Live<GroupValues<Key, Value>, GroupDiff<Key, Value>>

extension EntityStore {
    /// Starts a live group-by over the rows of `query` (its source and filters; order and
    /// limit do not apply): per value of `key`, the count, sum, minimum, maximum and
    /// average of `value`, with the changed groups after each commit.
    ///
    /// An equality query wakes only for its key (as ``live(_:)``); others for their table.
    /// - Complexity: O(n log g) to create over n rows (the source's index candidates when
    ///   it has an index); per commit, O(changed rows × log g) for groups of g rows.
    public func live<E: Entity, Key: Hashable & Sendable, Value: LiveAggregatable>(
        _ query: LiveQuery<E>, groupedBy key: any KeyPath<E, Key> & Sendable, aggregating value: any KeyPath<E, Value> & Sendable
    ) -> LiveGroups<Key, Value> {
        registered(filing: query.filing) { state in
            let engine = Lock(GroupEngine(query: query, key: key, value: value, state: state))
            return LiveGroups<Key, Value>(
                value: engine.withLock { $0.values }, revision: state.revision,
                initialDiff: { values in GroupEngine<E, Key, Value>.diff(from: GroupValues(), to: values) ?? GroupDiff() }
            ) { changes in
                engine.withLock { engine in engine.apply(changes).map { (engine.values, $0) } }
            }
        }
    }
}
