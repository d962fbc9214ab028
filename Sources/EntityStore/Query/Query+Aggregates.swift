extension Query {
    /// The sum of `keyPath` over the matching entities (ignoring offset and limit).
    /// - Complexity: O(m) over the m matches, streamed from the query's source.
    public func sum<Value: AdditiveArithmetic & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable) -> Value {
        var total = Value.zero
        unpaged.forEachUnorderedMatch { total += $0[keyPath: keyPath] }
        return total
    }

    /// The mean of an integer field over the matches, or nil when none match. O(m).
    public func average<Value: BinaryInteger & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable) -> Double? {
        var total = 0.0, count = 0
        unpaged.forEachUnorderedMatch { total += Double($0[keyPath: keyPath]); count += 1 }
        return count == 0 ? nil : total / Double(count)
    }

    /// The mean of a floating-point field over the matches, or nil when none match. O(m).
    public func average<Value: BinaryFloatingPoint & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable) -> Value? {
        var total = Value.zero, count = 0
        unpaged.forEachUnorderedMatch { total += $0[keyPath: keyPath]; count += 1 }
        return count == 0 ? nil : total / Value(count)
    }

    /// The least value of `keyPath` among the matches, or nil when none match. A NaN
    /// counts only when every value is one, and -0.0 is less than +0.0 (as in a group-by's
    /// aggregates).
    /// - Complexity: O(log n) with an ordered index on the field and no condition (plus the
    ///   rows whose value equals the least, for a floating-point field); else O(m).
    public func min<Value: Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable) -> Value? {
        extreme(keyPath, descending: false)
    }

    /// The greatest value of `keyPath` among the matches, or nil when none match. A NaN
    /// counts only when every value is one, and +0.0 is greater than -0.0.
    /// - Complexity: O(log n) with an ordered index on the field and no condition (plus the
    ///   rows whose value equals the greatest, for a floating-point field); else O(m).
    public func max<Value: Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable) -> Value? {
        extreme(keyPath, descending: true)
    }

    private func extreme<Value: Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, descending: Bool) -> Value? {
        // Equal values that a reader can still tell apart are floating-point zeros: the
        // minimum is -0.0 and the maximum +0.0 when both are there.
        let zerosDiffer = Value.self is any FloatingPoint.Type
        func better(_ value: Value, than current: Value) -> Bool {
            if descending ? current < value : value < current { return true }
            guard zerosDiffer, value == current, let sign = (value as? any FloatingPoint)?.sign,
                  let other = (current as? any FloatingPoint)?.sign
            else { return false }
            return descending ? (sign == .plus && other == .minus) : (sign == .minus && other == .plus)
        }
        if conditions.isEmpty, storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath)) != nil {
            var best: Value?
            unpaged.sorted(by: keyPath, descending: descending).visitMatches { entity in
                let value = entity[keyPath: keyPath]
                guard let current = best else {
                    best = value
                    return zerosDiffer
                }
                // Past the values equal to the first, nothing can beat it.
                guard value == current else { return false }
                if better(value, than: current) { best = value }
                return true
            }
            return best
        }
        // A value not equal to itself (NaN) is the answer only when every value is one,
        // as with an ordered index, which walks those last in either direction.
        var best: Value?, unordered: Value?
        unpaged.forEachUnorderedMatch { entity in
            let value = entity[keyPath: keyPath]
            if value != value {
                if unordered == nil { unordered = value }
                return
            }
            if let current = best, !better(value, than: current) { return }
            best = value
        }
        return best ?? unordered
    }

    /// The number of matches per value of `keyPath` (books per author).
    /// - Complexity: O(number of keys) from the sizes of a grouped index's groups when the
    ///   query has no condition; else O(m).
    public func countsByKey<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable) -> [Key: Int] {
        if conditions.isEmpty, let counts = storage.groupCounts(Key.self, for: keyPath) { return counts }
        var counts: [Key: Int] = [:]
        unpaged.forEachUnorderedMatch { counts[$0[keyPath: keyPath], default: 0] += 1 }
        return counts
    }

    /// Per value of `key` (books per author), the count, sum, minimum, maximum and average
    /// of `value` over the matches (offset and limit ignored): the same aggregates, summed
    /// the same way, as a live group-by (``EntityStore/live(_:groupedBy:aggregating:)``)
    /// keeps. Integer sums wrap instead of trapping; floating-point sums are compensated,
    /// a NaN makes its group's sum NaN and is left out of its minimum and maximum. A row
    /// whose key is unequal to itself (a NaN key) belongs to no group: a NaN equals no
    /// key, not even another NaN, so its group could never be looked up or followed.
    /// - Complexity: O(m) over the m matches, streamed from the query's source, plus
    ///   O(log d) per match for a group of d distinct values.
    public func aggregates<Key: Hashable & Sendable, Value: LiveAggregatable>(
        groupedBy key: any KeyPath<E, Key> & Sendable, of value: any KeyPath<E, Value> & Sendable
    ) -> [Key: GroupAggregate<Value>] {
        let readKey = fieldReader(key), readValue = fieldReader(value)
        var groups: [Key: GroupEngine<E, Key, Value>.Group] = [:]
        unpaged.forEachUnorderedMatch { entity in
            // A key unequal to itself (NaN) forms no group, as in a live group-by.
            let key = readKey(entity)
            if key == key { groups[key, default: .init()].add(readValue(entity)) }
        }
        var result: [Key: GroupAggregate<Value>] = [:]
        result.reserveCapacity(groups.count)
        for (key, group) in groups { result[key] = group.aggregate }
        return result
    }

    /// The matches grouped by the value of `keyPath`, each group in the query's order
    /// (offset and limit ignored). Streams from a source already in the query's order.
    /// - Complexity: O(m) over the m matches (plus O(m log m) to sort them when the source
    ///   is not in the query's order).
    public func grouped<Key: Hashable & Sendable>(by keyPath: any KeyPath<E, Key> & Sendable) -> [Key: [E]] {
        var groups: [Key: [E]] = [:]
        unpaged.forEachResult { entity in
            groups[entity[keyPath: keyPath], default: []].append(entity)
            return true
        }
        return groups
    }

    /// The query without offset, limit and order (aggregates see every match).
    private var unpaged: Query {
        var copy = self
        copy.offsetCount = 0
        copy.limitCount = nil
        return copy
    }

    /// Calls `body` with each match in the source's order, without collecting them.
    private func forEachUnorderedMatch(_ body: (E) -> Void) {
        var unordered = self
        unordered.ordering = nil
        unordered.visitMatches { body($0); return true }
    }
}

extension TableStorage {
    /// Each key's group size in the grouped index on `keyPath`, if there is one. O(keys).
    func groupCounts<Key: Hashable & Sendable>(_ type: Key.Type, for keyPath: AnyKeyPath) -> [Key: Int]? {
        for position in descriptor.indexes.indices where descriptor.indexes[position].keyPath?.keyPath == keyPath {
            if let grouped = indexes[position] as? IndexBox<GroupedIndex<E, Key>> {
                return Dictionary(uniqueKeysWithValues: grouped.index.keyCounts.map { ($0.key, $0.count) })
            }
        }
        return nil
    }
}
