import HashTreeCollections

extension Query {
    /// Where a run reads its candidates from.
    @usableFromInline
    enum Source {
        /// A range condition's index, walked in the query's order (top-k of a range).
        case orderedRange(condition: Int, ids: IDWalk<E>)
        /// An index's candidates for one condition.
        case candidates(condition: Int, QueryCandidates<E>)
        /// The sort field's ordered index, in the query's order.
        case indexOrder(IDWalk<E>)
        /// Every row in insertion order.
        case scan
    }

    @inlinable
    func source() -> Source {
        if let ordering, let field = ordering.field {
            for position in conditions.indices {
                guard let orderedRange = conditions[position].orderedRange, conditions[position].field == field else { continue }
                if let ids = orderedRange(storage, ordering.descending) { return .orderedRange(condition: position, ids: ids) }
            }
        }
        // The first condition an index answers (an unsorted query comes in its order).
        for position in conditions.indices {
            if let candidates = conditions[position].candidates(storage) { return .candidates(condition: position, candidates) }
        }
        if let ordering, let ordered = ordering.indexOrder(storage) { return .indexOrder(ordered) }
        return .scan
    }

    /// How the query runs: the index it starts from, or a scan. Computes descriptions (a
    /// key path's name is found by reflection), so it is meant for tools, not hot paths.
    /// - Complexity: the cost of finding the query's source (O(log n) at most), plus the
    ///   text of one condition and of the order.
    public var plan: String {
        switch source() {
        case .orderedRange(let position, _):
            "ordered index range (\(conditions[position].describe()), in order of \(ordering?.describe() ?? ""))"
        case .candidates(let position, _):
            "index lookup (\(conditions[position].describe()))"
        case .indexOrder:
            "ordered index scan (\(ordering?.describe() ?? ""))"
        case .scan:
            "table scan"
        }
    }

    /// The source's IDs (nil: a scan in insertion order), the tests left for each
    /// candidate, and whether the source's order is the query's.
    @inlinable
    func plannedRun() -> Run {
        var ids: IDWalk<E>?
        var group: SortedMap<UInt64, E.ID>?
        var skipped: Int?
        var sourceInOrder = false
        switch source() {
        case .orderedRange(let position, let walk):
            (ids, skipped, sourceInOrder) = (walk, position, true)
        case .candidates(let position, let candidates):
            // A superset leaves its condition's test to run on each candidate.
            if let found = candidates.group { group = found } else { ids = candidates.ids }
            skipped = candidates.isExact ? position : nil
        case .indexOrder(let walk):
            (ids, sourceInOrder) = (walk, true)
        case .scan:
            break
        }
        var rest: [@Sendable (E) -> Bool] = []
        for position in conditions.indices where position != skipped { rest.append(conditions[position].matches) }
        // Without a sort, the source's order is the query's.
        return Run(ids: ids, group: group, rest: rest, inOrder: sourceInOrder || ordering == nil)
    }

    /// What a run walks: a group, other IDs, or (neither) the table in insertion order.
    @usableFromInline
    struct Run {
        @usableFromInline let ids: IDWalk<E>?
        @usableFromInline let group: SortedMap<UInt64, E.ID>?
        @usableFromInline let rest: [@Sendable (E) -> Bool]
        /// Whether the run yields the matches in the query's order (so it can stop at
        /// the page's end).
        @usableFromInline let inOrder: Bool

        @inlinable
        init(ids: IDWalk<E>?, group: SortedMap<UInt64, E.ID>?, rest: [@Sendable (E) -> Bool], inOrder: Bool) {
            self.ids = ids
            self.group = group
            self.rest = rest
            self.inOrder = inOrder
        }
    }

    /// Calls `body` with each ID of `run`'s source, in its order, until it returns false.
    @inlinable
    func forEachCandidate(of run: Run, _ body: (E.ID) -> Bool) {
        if let group = run.group {
            // A group walks its B-tree directly.
            group.forEachValue(at: 0..<group.count, body)
        } else if let ids = run.ids {
            ids.walk(body)
        } else {
            for (_, id) in storage.order where !body(id) { return }
        }
    }

    /// Calls `body` with each matching entity of `run`, in its order, until it returns false.
    @inlinable
    func forEachMatch(of run: Run, _ body: (consuming E) -> Bool) {
        let rows = storage.rows
        let rest = run.rest
        if rest.isEmpty {
            forEachCandidate(of: run) { id in
                guard let row = rows[id] else { return true }
                // Moved, not copied: the entity is copied once, out of the row map.
                return body((consume row).value)
            }
        } else {
            forEachCandidate(of: run) { id in
                guard let entity = rows[id].map({ $0.value }) else { return true }
                for test in rest where !test(entity) { return true }
                return body(entity)
            }
        }
    }

    /// Calls `body` with each match of the page (offset and limit applied), in the
    /// query's order, until it returns false. Streams from a source in the query's order
    /// (stopping at the page's end); sorts the matches first otherwise.
    @inlinable
    func forEachResult(_ body: (consuming E) -> Bool) {
        let run = plannedRun()
        let limit = limitCount ?? .max
        guard limit > 0 else { return }
        guard run.inOrder else {
            for entity in sortedPage(of: run) where !body(entity) { return }
            return
        }
        var skipped = 0, taken = 0
        forEachMatch(of: run) { entity in
            if skipped < offsetCount {
                skipped += 1
                return true
            }
            taken += 1
            return body(entity) && taken < limit
        }
    }

    /// The matching entities, ordered and paged.
    /// - Complexity: the source's cost (see ``Query``) plus O(1) per candidate read; a
    ///   source in the query's order (an index lookup or range, the sort field's ordered
    ///   index, or any source when unsorted) stops at the page's end, so a top-k is
    ///   O(log n + offset + k); other sorts add O(m log m) over the m matches.
    @inlinable
    public var results: [E] {
        var collected: [E] = []
        if let limitCount { collected.reserveCapacity(Swift.min(limitCount, 1_024)) }
        forEachResult { entity in
            collected.append(entity)
            return true
        }
        return collected
    }

    /// The page of `run`'s matches in the query's order, for a source not in that order:
    /// every match is read, then sorted and paged.
    @inlinable
    func sortedPage(of run: Run) -> [E] {
        // Ties are broken by insertion position, not by the source's order: an ordered
        // index on another field hands its rows out in that field's order.
        var matches: [(entity: E, sequence: UInt64)] = []
        let rows = storage.rows, rest = run.rest
        forEachCandidate(of: run) { id in
            guard let row = rows[id] else { return true }
            for test in rest where !test(row.value) { return true }
            matches.append((row.value, row.sequence))
            return true
        }
        if let ordering {
            matches.sort { lhs, rhs in
                if ordering.areInIncreasingOrder(lhs.entity, rhs.entity) { return true }
                if ordering.areInIncreasingOrder(rhs.entity, lhs.entity) { return false }
                return lhs.sequence < rhs.sequence
            }
        }
        let collected = matches.map { $0.entity }
        if offsetCount == 0, limitCount.map({ $0 >= collected.count }) ?? true { return collected }
        let dropped = collected.dropFirst(offsetCount)
        return Array(limitCount.map { dropped.prefix($0) } ?? dropped)
    }

    /// Calls `body` with each match in the source's order, until it returns false.
    @inlinable
    func visitMatches(_ body: (E) -> Bool) {
        forEachMatch(of: plannedRun(), body)
    }

    /// The IDs of the matching entities, ordered and paged.
    /// - Complexity: as ``results``.
    @inlinable
    public var ids: [E.ID] {
        var ids: [E.ID] = []
        forEachResult { entity in
            ids.append(entity.id)
            return true
        }
        return ids
    }

    /// The number of matching entities (ignoring offset and limit).
    /// - Complexity: O(1) without conditions, and for one equality on a unique or grouped index; O(log n) for one
    ///   equality or range on an ordered index (`whereNotNil` O(1), `where(_:notEquals:)`
    ///   and `whereNil` O(1) from the size of the field's index); otherwise one pass over
    ///   the candidates, building no entity when no other condition needs one.
    @inlinable
    public var count: Int {
        if conditions.isEmpty { return storage.count }
        if conditions.count == 1 {
            if let known = conditions[0].indexCount?(storage) { return known }
            if let known = conditions[0].candidates(storage)?.count { return known }
        }
        var unordered = self
        unordered.ordering = nil
        let run = unordered.plannedRun()
        var matches = 0
        if run.rest.isEmpty {
            let rows = storage.rows
            unordered.forEachCandidate(of: run) { id in
                if rows[id] != nil { matches += 1 }
                return true
            }
        } else {
            unordered.forEachMatch(of: run) { _ in
                matches += 1
                return true
            }
        }
        return matches
    }

    /// Whether any entity matches; stops at the first.
    /// - Complexity: O(1) for one equality on a unique or grouped index; otherwise the
    ///   source's cost up to the first match.
    @inlinable
    public var exists: Bool {
        if conditions.count == 1, let known = conditions[0].candidates(storage)?.count { return known > 0 }
        var unordered = self
        unordered.ordering = nil
        var found = false
        unordered.forEachMatch(of: unordered.plannedRun()) { _ in
            found = true
            return false
        }
        return found
    }

    /// The first matching entity in the query's order.
    /// - Complexity: as ``results`` with a limit of one: O(log n) or O(1) from an index in
    ///   the query's order, the source's cost up to the first match when unsorted, and
    ///   O(m log m) over the m matches for another sort.
    @inlinable
    public var first: E? {
        var first: E?
        limit(1).forEachResult { entity in
            first = entity
            return false
        }
        return first
    }
}

/// A type-erased sequence of IDs (an index walk of dynamic-record fields).
struct AnySequenceOfIDs<E: Entity>: Sequence {
    private let makeIteratorBody: () -> AnyIterator<E.ID>

    init<S: Sequence>(_ sequence: S) where S.Element == E.ID {
        makeIteratorBody = { AnyIterator(sequence.makeIterator()) }
    }

    func makeIterator() -> AnyIterator<E.ID> { makeIteratorBody() }
}

extension SortedMapRange {
    /// The interval a standard range expression describes.
    @inlinable
    init(bounding range: some RangeExpression<Key>) {
        switch range {
        case let range as Range<Key>: self.init(range)
        case let range as ClosedRange<Key>: self.init(range)
        case let range as PartialRangeFrom<Key>: self.init(range)
        case let range as PartialRangeThrough<Key>: self.init(range)
        case let range as PartialRangeUpTo<Key>: self.init(range)
        default: self.init()
        }
    }
}
