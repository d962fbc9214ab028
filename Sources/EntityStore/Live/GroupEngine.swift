import HashTreeCollections
import StoreCore

/// The incremental engine of a live group-by: per group, the row count, the running sum
/// and an ordered multiset of the values (so the minimum and maximum stay right when the
/// extreme row leaves). Per commit, each changed row's old contribution (read from the
/// change set's previous value) leaves its group and its new one enters: O(changed rows
/// × log d) for groups of d distinct values.
@usableFromInline
struct GroupEngine<E: Entity, Key: Hashable & Sendable, Value: LiveAggregatable>: Sendable {
    /// One group's running state. The values are kept as a multiset: each distinct value
    /// with the number of rows holding it, ordered by value, so that the tree holds d
    /// distinct values rather than one entry per row (small and cache-resident for the
    /// quantities, prices and scores groups usually sum). A NaN (a value unequal to
    /// itself) has no place in that order: it is counted, and makes the sum NaN, but the
    /// minimum and maximum are those of the other values (NaN when there are none). Values
    /// are ordered by ``LiveAggregatable/liveOrders(_:before:)``, which tells -0.0 from
    /// +0.0, so each zero keeps its own count and the extremes do not depend on history.
    @usableFromInline
    struct Group: Sendable {
        @usableFromInline var count = 0
        @usableFromInline var sum = LiveSum<Value>()
        @usableFromInline var values = SortedMap<LiveOrdered<Value>, Int>()
        /// The smallest and largest ordered values (nil when there are none), kept so that
        /// an aggregate costs O(1).
        @usableFromInline var minimum: Value?
        @usableFromInline var maximum: Value?
        /// How many values are unordered (NaN), and one of them.
        @usableFromInline var unordered = 0
        @usableFromInline var unorderedSample: Value?

        @inlinable
        init() {}

        /// O(1).
        @inlinable
        var aggregate: GroupAggregate<Value>? {
            guard count > 0 else { return nil }
            guard let minimum, let maximum else {
                guard let nan = unorderedSample else { return nil }
                return GroupAggregate(count: count, sum: sum.total, min: nan, max: nan)
            }
            return GroupAggregate(count: count, sum: sum.total, min: minimum, max: maximum)
        }

        /// Adds one row's value. O(log d).
        @inlinable
        mutating func add(_ value: Value) {
            count += 1
            Value.liveAccumulate(value, removing: false, into: &sum)
            if value != value {
                unordered += 1
                unorderedSample = value
            } else {
                values.updateValue(forKey: LiveOrdered(value)) { ($0 ?? 0) &+ 1 }
                if minimum.map({ Value.liveOrders(value, before: $0) }) ?? true { minimum = value }
                if maximum.map({ Value.liveOrders($0, before: value) }) ?? true { maximum = value }
            }
        }

        /// Takes `leaving` out of `group` and puts `entering` in; returns the aggregates
        /// before and after. A static function of an `inout` group, so that a group stored
        /// in a dictionary changes in place, with no copy. O(log d).
        @inlinable
        static func change(
            _ group: inout Group, leaving: Value?, entering: Value?
        ) -> (old: GroupAggregate<Value>?, new: GroupAggregate<Value>?) {
            let old = group.aggregate
            if let leaving { group.remove(leaving) }
            if let entering { group.add(entering) }
            return (old, group.aggregate)
        }

        /// Removes one row's value; nothing if the group holds no such value. O(log d).
        @inlinable
        mutating func remove(_ value: Value) {
            if value != value {
                guard unordered > 0 else { return }
                unordered -= 1
                if unordered == 0 { unorderedSample = nil }
            } else {
                // One walk for the usual case, a value other rows still hold.
                let key = LiveOrdered(value)
                guard let rows = values.updateValue(forKey: key, { ($0 ?? 0) &- 1 }) else {
                    // Not held (no row added it): undo the insertion, change nothing.
                    values.removeValue(forKey: key)
                    return
                }
                if rows == 1 {
                    values.removeValue(forKey: key)
                    // The last row holding an extreme left: the next distinct value takes over.
                    if minimum.map({ LiveOrdered($0) == key }) ?? false { minimum = values.first?.key.value }
                    if maximum.map({ LiveOrdered($0) == key }) ?? false { maximum = values.last?.key.value }
                }
            }
            count -= 1
            Value.liveAccumulate(value, removing: true, into: &sum)
        }
    }

    /// The parts of the query the engine uses, kept apart so that a commit copies no query.
    @usableFromInline let table: String
    @usableFromInline let qualifies: @Sendable (E) -> Bool
    @usableFromInline let candidates: (@Sendable (TableStorage<E>) -> [E.ID]?)?
    @usableFromInline let key: @Sendable (E) -> Key
    @usableFromInline let value: @Sendable (E) -> Value
    @usableFromInline var groups: [Key: Group] = [:]
    @usableFromInline var values = GroupValues<Key, Value>()

    @inlinable
    init(query: LiveQuery<E>, key: @escaping @Sendable (E) -> Key, value: @escaping @Sendable (E) -> Value, state: EntityState) {
        self.table = query.table.name
        self.qualifies = query.qualifier
        self.candidates = query.source.candidates
        self.key = key
        self.value = value
        if let storage = state.storage(named: table, as: E.self) { fill(from: storage) }
    }

    @inlinable
    mutating func fill(from storage: TableStorage<E>) {
        groups = [:]
        let qualifies = qualifies, key = key
        func add(_ row: Row<E>) {
            // A key unequal to itself (NaN) forms no group.
            guard qualifies(row.value) else { return }
            let group = key(row.value)
            if group == group { groups[group, default: Group()].add(value(row.value)) }
        }
        if let candidates = candidates?(storage) {
            for id in candidates { if let row = storage.rows[id] { add(row) } }
        } else {
            for (_, id) in storage.order { if let row = storage.rows[id] { add(row) } }
        }
        var values = GroupValues<Key, Value>()
        for (key, group) in groups { values.groups[key] = group.aggregate }
        self.values = values
    }

    @inlinable
    mutating func apply(_ commit: DeliveredCommit) -> GroupDiff<Key, Value>? {
        if commit.replacesAll {
            guard let storage = commit.current.storage(named: table, as: E.self) else { return nil }
            let old = values
            fill(from: storage)
            return Self.diff(from: old, to: values)
        }
        guard let table = commit.table(table, as: E.self) else { return nil }
        let key = key, value = value, qualifies = qualifies
        /// The group of a row: nil when it does not qualify, or when its key is unequal to
        /// itself (a NaN equals no group, not even its own).
        func group(of entity: E) -> Key? {
            guard qualifies(entity) else { return nil }
            let group = key(entity)
            return group == group ? group : nil
        }
        // Each touched group with its aggregates before and after the commit (a commit
        // touches a group or two).
        var touched = SmallMap<Key, Touched>()
        func note(_ group: Key, old: GroupAggregate<Value>?, new: GroupAggregate<Value>?) {
            if let position = touched.position(of: group) {
                touched.values[position].new = new
            } else {
                touched.set(Touched(old: old, new: new), for: group)
            }
        }
        /// Takes `leaving` out of `group` and puts `entering` in: one lookup, and the group
        /// changed in place.
        func change(_ group: Key, leaving: Value?, entering: Value?) {
            guard let index = groups.index(forKey: group) else {
                guard let entering else { return }
                var new = Group()
                new.add(entering)
                note(group, old: nil, new: new.aggregate)
                groups[group] = new
                return
            }
            let (old, new) = Group.change(&groups.values[index], leaving: leaving, entering: entering)
            note(group, old: old, new: new)
            if new == nil { groups.remove(at: index) }
        }
        // By index: fields are read from each element in place, where a `for-in` copies
        // each element out (a retain of every reference it holds) first.
        let updated = table.updated, inserted = table.inserted
        for index in updated.indices {
            let oldGroup = group(of: updated[index].previous), newGroup = group(of: updated[index].row.value)
            if let oldGroup, oldGroup == newGroup {
                change(oldGroup, leaving: value(updated[index].previous), entering: value(updated[index].row.value))
                continue
            }
            if let oldGroup { change(oldGroup, leaving: value(updated[index].previous), entering: nil) }
            if let newGroup { change(newGroup, leaving: nil, entering: value(updated[index].row.value)) }
        }
        for old in table.removed.values {
            if let oldGroup = group(of: old) { change(oldGroup, leaving: value(old), entering: nil) }
        }
        for index in inserted.indices {
            if let newGroup = group(of: inserted[index].value) { change(newGroup, leaving: nil, entering: value(inserted[index].value)) }
        }

        var changed: [GroupDiff<Key, Value>.Change] = []
        for (group, aggregates) in zip(touched.keys, touched.values) where aggregates.new != aggregates.old {
            values.groups[group] = aggregates.new
            changed.append(.init(key: group, old: aggregates.old, new: aggregates.new))
        }
        return changed.isEmpty ? nil : GroupDiff(changes: changed)
    }

    /// A touched group's aggregates before and after a commit.
    @usableFromInline
    struct Touched {
        @usableFromInline let old: GroupAggregate<Value>?
        @usableFromInline var new: GroupAggregate<Value>?

        @inlinable
        init(old: GroupAggregate<Value>?, new: GroupAggregate<Value>?) {
            self.old = old
            self.new = new
        }
    }

    /// The changes from `old` to `new`, group by group. O(groups).
    @inlinable
    static func diff(from old: GroupValues<Key, Value>, to new: GroupValues<Key, Value>) -> GroupDiff<Key, Value>? {
        var changed: [GroupDiff<Key, Value>.Change] = []
        for (key, aggregate) in new.groups where old.groups[key] != aggregate {
            changed.append(.init(key: key, old: old.groups[key], new: aggregate))
        }
        for (key, aggregate) in old.groups where new.groups[key] == nil {
            changed.append(.init(key: key, old: aggregate, new: nil))
        }
        return changed.isEmpty ? nil : GroupDiff(changes: changed)
    }
}

/// A live group-by: ``GroupValues`` and their ``GroupDiff`` per commit.
public typealias LiveGroups<Key: Hashable & Sendable, Value: LiveAggregatable> = Live<GroupValues<Key, Value>, GroupDiff<Key, Value>>

extension EntityStore {
    /// Starts a live group-by over the rows of `query` (its source and filters; order and
    /// limit do not apply): per value of `key`, the count, sum, minimum, maximum and
    /// average of `value`, with the changed groups after each commit. A row whose key is
    /// unequal to itself (a NaN key) belongs to no group, as in
    /// ``Query/aggregates(groupedBy:of:)``.
    ///
    /// An equality query wakes only for its key (as ``live(_:)->LiveList<E>``); others for their table.
    /// - Complexity: O(n log d) to create over n rows (the source's index candidates when
    ///   it has an index); per commit, O(changed rows × log d) for groups of d distinct
    ///   values.
    @inlinable
    public func live<E: Entity, Key: Hashable & Sendable, Value: LiveAggregatable>(
        _ query: LiveQuery<E>, groupedBy key: any KeyPath<E, Key> & Sendable, aggregating value: any KeyPath<E, Value> & Sendable
    ) -> LiveGroups<Key, Value> {
        let readKey = fieldReader(key), readValue = fieldReader(value)
        return registered(filing: query.filing) { state in
            let engine = Lock(GroupEngine(query: query, key: readKey, value: readValue, state: state))
            return LiveGroups<Key, Value>(
                current: { engine.withLock { $0.values } }, revision: state.revision,
                initialDiff: { values in GroupEngine<E, Key, Value>.diff(from: GroupValues(), to: values) ?? GroupDiff() },
                step: { commit in
                    engine.withLock { engine in
                        engine.apply(commit).map { LiveGroups<Key, Value>.Update(value: engine.values, diff: $0, revision: commit.revision) }
                    }
                })
        }
    }
}

/// A value in the order of ``LiveAggregatable/liveOrders(_:before:)`` (-0.0 before +0.0),
/// the key of a group's multiset of values. NaN never becomes one.
@usableFromInline
struct LiveOrdered<Value: LiveAggregatable>: Comparable, Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) { self.value = value }

    @inlinable
    static func < (lhs: Self, rhs: Self) -> Bool { Value.liveOrders(lhs.value, before: rhs.value) }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        !Value.liveOrders(lhs.value, before: rhs.value) && !Value.liveOrders(rhs.value, before: lhs.value)
    }
}
