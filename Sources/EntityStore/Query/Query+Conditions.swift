extension Query {
    /// Keeps entities whose field `keyPath` differs from `value`. A filter: O(n), or the
    /// cost of another indexed condition of the query. O(1) to add.
    public func `where`<Value: Equatable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, notEquals value: Value) -> Query {
        adding(Condition(
            describe: { "\(fieldPath(of: keyPath)) != \(value)" }, matches: { $0[keyPath: keyPath] != value },
            candidates: { _ in nil }))
    }

    /// Keeps entities whose field `keyPath` is one of `values`, using a unique or grouped
    /// index on the field: O(v) to find the v keys' groups, then O(1) per row (the groups
    /// come one after the other, each in insertion order). O(n) without an index.
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, oneOf values: some Sequence<Value>) -> Query {
        let keys = Array(Set(values))
        let members = Set(keys)
        return adding(Condition(
            describe: { "\(fieldPath(of: keyPath)) in \(keys)" }, matches: { members.contains($0[keyPath: keyPath]) },
            candidates: { storage in
                var groups: [QueryCandidates<E>] = []
                for key in keys {
                    guard let found = storage.candidatesEqual(key, usingIndexesAt: storage.indexPositions(for: keyPath)) else { return nil }
                    groups.append(found)
                }
                let found = groups
                let total = found.reduce(0) { $0 + ($1.count ?? 0) }
                return QueryCandidates(count: total, isInsertionOrder: keys.count <= 1) {
                    AnySequenceOfIDs(found.lazy.flatMap { $0.ids })
                }
            }))
    }

    /// Keeps entities whose optional field `keyPath` is nil. A filter (indexes hold only
    /// non-nil keys): O(n), or the cost of another indexed condition. O(1) to add.
    public func whereNil<Value: Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable) -> Query {
        adding(Condition(describe: { "\(fieldPath(of: keyPath)) is nil" }, matches: { $0[keyPath: keyPath] == nil }, candidates: { _ in nil }))
    }

    /// Keeps entities whose optional field `keyPath` is not nil; an ordered index on the
    /// field holds exactly those, so it answers them (and their count in O(1)).
    public func whereNotNil<Value: Comparable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable) -> Query {
        var condition = Condition(describe: { "\(fieldPath(of: keyPath)) is not nil" }, matches: { $0[keyPath: keyPath] != nil }) { storage in
            guard let index = storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return QueryCandidates(count: index.entryCount, isInsertionOrder: false) { index.allIDs(descending: false) }
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in
            storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath))?.allIDs(descending: descending)
        }
        return adding(condition)
    }

    /// Keeps entities whose string field `keyPath` starts with `prefix` (as
    /// `String.hasPrefix` says). An ordered index on the field answers it: the keys with
    /// the prefix are contiguous in its order, so O(log n) to find them, then O(1) per row.
    public func `where`(_ keyPath: any KeyPath<E, String> & Sendable, hasPrefix prefix: String) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) starts with \(prefix)" }, matches: { $0[keyPath: keyPath].hasPrefix(prefix) }
        ) { storage in
            guard let index = storage.orderedIndex(String.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return QueryCandidates(count: nil, isInsertionOrder: false) { index.lazyIDs(withPrefix: prefix) }
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in
            // Ascending only: a descending sort of the run is done on its matches.
            guard !descending, let index = storage.orderedIndex(String.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return index.lazyIDs(withPrefix: prefix)
        }
        return adding(condition)
    }
}

extension OrderedIndex where Key == String {
    /// The IDs whose key starts with `prefix`, in key order: from the first key not below
    /// `prefix`, while keys have the prefix. O(log n) to start, O(1) per ID.
    func lazyIDs(withPrefix prefix: String) -> AnySequenceOfIDs<Element> {
        let start = entryRange(SortedMapRange(prefix...))
        return AnySequenceOfIDs(entries.elements(in: start).lazy.prefix { $0.key.key.hasPrefix(prefix) }.map { $0.value })
    }
}
