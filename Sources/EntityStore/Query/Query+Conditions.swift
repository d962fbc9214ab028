extension Query {
    /// Keeps entities whose field `keyPath` differs from `value`. A filter.
    /// - Complexity: O(1) to add. Run: O(n), or the cost of another indexed condition of
    ///   the query.
    @inlinable
    public consuming func `where`<Value: Equatable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, notEquals value: Value) -> Query {
        adding(Condition(
            describe: { "\(fieldPath(of: keyPath)) != \(value)" }, matches: { $0[keyPath: keyPath] != value },
            candidates: { _ in nil }))
    }

    /// Keeps entities whose field `keyPath` differs from `value`. A filter, but a unique or
    /// grouped index on the field counts it: every row is in the index, so the count is
    /// the table's size less the key's group.
    /// - Complexity: O(1) to add. Run: O(n), or the cost of another indexed condition of
    ///   the query; `count` of this condition alone is O(1) with a unique or grouped index.
    @inlinable
    public consuming func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, notEquals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) != \(value)" }, matches: { $0[keyPath: keyPath] != value },
            candidates: { _ in nil })
        condition.indexCount = { storage in storage.hashedCount(of: value, for: keyPath).map { storage.count - $0 } }
        return adding(condition)
    }

    /// Keeps entities whose field `keyPath` is one of `values`, using a unique or grouped
    /// index on the field. Without a sort the matches come key by key, in the order the
    /// keys first appear in `values` (duplicates are ignored), each key's in insertion
    /// order, so the same query gives the same page in every process.
    /// - Complexity: O(v) to add, for v values. Run: O(v) to find the keys' groups, then
    ///   O(1) per row, stopping at the limit when unsorted (`count` alone is O(v)); O(n)
    ///   without an index.
    @inlinable
    public consuming func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, oneOf values: some Sequence<Value>) -> Query {
        var members = Set<Value>()
        var keys: [Value] = []
        for value in values where members.insert(value).inserted { keys.append(value) }
        let distinct = keys, memberSet = members
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) in \(distinct)" }, matches: { memberSet.contains($0[keyPath: keyPath]) },
            candidates: { storage in
                var groups: [QueryCandidates<E>] = []
                groups.reserveCapacity(distinct.count)
                var total = 0
                for key in distinct {
                    guard let found = storage.candidatesEqual(key, for: keyPath) else { return nil }
                    groups.append(found)
                    total += found.count ?? 0
                }
                let found = groups
                return QueryCandidates(count: total, ids: IDWalk { body in
                    var going = true
                    for group in found where going {
                        group.ids.walk { id in
                            going = body(id)
                            return going
                        }
                    }
                })
            })
        condition.indexCount = { storage in
            var total = 0
            for key in distinct {
                guard let count = storage.hashedCount(of: key, for: keyPath) else { return nil }
                total += count
            }
            return total
        }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` is nil. A filter (indexes hold only
    /// non-nil keys), but an ordered index on the field counts it: the table's size less
    /// the index's entries.
    /// - Complexity: O(1) to add. Run: O(n), or the cost of another indexed condition;
    ///   `count` of this condition alone is O(1) with an ordered index on the field.
    @inlinable
    public consuming func whereNil<Value: Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) is nil" }, matches: { $0[keyPath: keyPath] == nil }, candidates: { _ in nil })
        condition.indexCount = { storage in storage.orderedEntryCount(for: keyPath).map { storage.count - $0 } }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` is not nil; an ordered index on the
    /// field holds exactly those, so it answers them.
    /// - Complexity: O(1) to add. Run: with an ordered index, O(log n) to start, then O(1)
    ///   per row, and `count` alone O(1); O(n) without one.
    @inlinable
    public consuming func whereNotNil<Value: Comparable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable) -> Query {
        var condition = Condition(describe: { "\(fieldPath(of: keyPath)) is not nil" }, matches: { $0[keyPath: keyPath] != nil }) { storage in
            guard let index = storage.orderedEntries(Value.self, for: keyPath) else { return nil }
            return QueryCandidates(count: index.entryCount, ids: index.walkAll(descending: false))
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in storage.orderedEntries(Value.self, for: keyPath)?.walkAll(descending: descending) }
        return adding(condition)
    }

    /// Keeps entities whose string field `keyPath` starts with `prefix`, exactly as
    /// `String.hasPrefix` says (character by character, so `"👩‍💻"` does not start with
    /// `"👩"`). An ordered index on the field answers it: the keys whose normalized
    /// Unicode scalars start with the prefix's are contiguous in its order and hold every
    /// match, so the walk reads that run and keeps the keys `hasPrefix` accepts.
    /// - Complexity: O(1) to add. Run: with an ordered index, O(log n) to find the run,
    ///   then O(1) per key of the run (plus the key's length to test it); O(n) without one.
    @inlinable
    public consuming func `where`(_ keyPath: any KeyPath<E, String> & Sendable, hasPrefix prefix: String) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) starts with \(prefix)" }, matches: { $0[keyPath: keyPath].hasPrefix(prefix) }
        ) { storage in
            guard let index = storage.orderedEntries(String.self, for: keyPath) else { return nil }
            return QueryCandidates(count: nil, ids: index.walk(withPrefix: prefix))
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in
            // Ascending only: a descending sort of the run is done on its matches.
            guard !descending, let index = storage.orderedEntries(String.self, for: keyPath) else { return nil }
            return index.walk(withPrefix: prefix)
        }
        return adding(condition)
    }
}

extension TableStorage {
    /// The number of entries of an ordered index on `keyPath` (the rows whose field is
    /// not nil), or nil without one. O(indexes).
    @usableFromInline
    func orderedEntryCount(for keyPath: AnyKeyPath) -> Int? {
        for position in indexes.indices where descriptor.indexes[position].kind == .ordered && isIndex(position, on: keyPath) {
            if let keyed = descriptor.indexes[position].erased(indexes[position]) as? any KeyedEntityIndex { return keyed.entryCount }
        }
        return nil
    }
}

extension OrderedEntries where Key == String {
    /// The IDs whose key starts with `prefix` (`String.hasPrefix`), in key order.
    ///
    /// Keys compare by their NFC-normalized Unicode scalars, and every key with the prefix
    /// has the prefix's normalized scalars at its start (normalization never joins across
    /// the boundary of two characters), so all of them lie in the run of keys that start
    /// with those scalars, from the first key not below `prefix`. That run can also hold
    /// keys without the prefix (`"👩‍💻"` begins with the scalar of `"👩"` but its first
    /// character is another), so the walk tests each key and stops at the first key past
    /// the run. O(log n) to start, O(1) per key of the run plus its length.
    @inlinable
    func walk(withPrefix prefix: String) -> IDWalk<Element> {
        let start = entryRange(SortedMapRange(prefix...))
        let normalizedPrefix = prefix._nfcCodeUnits
        return IDWalk { body in
            for (entry, id) in entries.elements(in: start) {
                if entry.key.hasPrefix(prefix) {
                    if !body(id) { return }
                } else if !entry.key.utf8.starts(with: normalizedPrefix), !entry.key._nfcCodeUnits.starts(with: normalizedPrefix) {
                    // Past the run: every later key is greater than all keys of the run.
                    return
                }
            }
        }
    }
}
