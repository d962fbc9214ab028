import HashTreeCollections

extension Query {
    /// Where a run reads its candidates from.
    private enum Source {
        /// A range condition's index, walked in the query's order (top-k of a range).
        case orderedRange(condition: Int, ids: AnySequenceOfIDs<E>)
        /// An index's candidates for one condition.
        case candidates(condition: Int, QueryCandidates<E>)
        /// The sort field's ordered index, in the query's order.
        case indexOrder(AnySequenceOfIDs<E>)
        /// Every row in insertion order.
        case scan
    }

    private func source() -> Source {
        if let ordering, let field = ordering.field {
            for (position, condition) in conditions.enumerated() where condition.field == field {
                if let ids = condition.orderedRange?(storage, ordering.descending) { return .orderedRange(condition: position, ids: ids) }
            }
        }
        // The first condition an index answers (an unsorted query comes in its order).
        for (position, condition) in conditions.enumerated() {
            if let candidates = condition.candidates(storage) { return .candidates(condition: position, candidates) }
        }
        if let ordering, let ordered = ordering.indexOrder(storage) { return .indexOrder(ordered) }
        return .scan
    }

    /// How the query runs: the index it starts from, or a scan. Computes descriptions (a
    /// key path's name is found by reflection), so it is meant for tools, not hot paths.
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
    func plannedRun() -> Run {
        let (ids, group, skipped, inOrder): (AnySequenceOfIDs<E>?, SortedMap<UInt64, E.ID>?, Int?, Bool) = switch source() {
        case .orderedRange(let position, let ids): (ids, nil, position, true)
        case .candidates(let position, let candidates):
            // A superset leaves its condition's test to run on each candidate.
            (candidates.group == nil ? candidates.ids : nil, candidates.group, candidates.isExact ? position : nil,
             ordering == nil && candidates.isInsertionOrder)
        case .indexOrder(let ids): (ids, nil, nil, true)
        case .scan: (nil, nil, nil, ordering == nil)
        }
        let rest = conditions.indices.filter { $0 != skipped }.map { conditions[$0].matches }
        return Run(ids: ids, group: group, rest: rest, inOrder: inOrder)
    }

    /// What a run walks: a group, other IDs, or (neither) the table in insertion order.
    struct Run {
        let ids: AnySequenceOfIDs<E>?
        let group: SortedMap<UInt64, E.ID>?
        let rest: [@Sendable (E) -> Bool]
        let inOrder: Bool
    }

    /// Calls `body` with each matching entity of `run`, in its order, until it returns false.
    func forEachMatch(of run: Run, _ body: (E) -> Bool) {
        let rows = storage.rows
        let rest = run.rest
        if let group = run.group {
            // A group walks its B-tree directly, without a type-erased iterator.
            for (_, id) in group {
                guard let entity = rows[id].map({ $0.value }) else { continue }
                if rest.allSatisfy({ $0(entity) }), !body(entity) { return }
            }
        } else if let ids = run.ids {
            for id in ids {
                guard let entity = rows[id].map({ $0.value }) else { continue }
                if rest.allSatisfy({ $0(entity) }), !body(entity) { return }
            }
        } else {
            for (_, id) in storage.order {
                guard let entity = rows[id].map({ $0.value }) else { continue }
                if rest.allSatisfy({ $0(entity) }), !body(entity) { return }
            }
        }
    }

    /// The matching entities, ordered and paged.
    public var results: [E] {
        let run = plannedRun()
        // A source already in the query's order stops as soon as the page is full.
        let wanted = run.inOrder ? limitCount.map { offsetCount + $0 } : nil
        var collected: [E] = []
        if let wanted { collected.reserveCapacity(Swift.min(wanted, 1_024)) }
        if wanted != 0 {
            forEachMatch(of: run) { entity in
                collected.append(entity)
                return wanted.map { collected.count < $0 } ?? true
            }
        }
        if !run.inOrder { collected = sortIfNeeded(collected) }
        return page(collected)
    }

    /// Calls `body` with each match in the source's order, until it returns false.
    func visitMatches(_ body: (E) -> Bool) {
        forEachMatch(of: plannedRun(), body)
    }

    /// The IDs of the matching entities, ordered and paged.
    public var ids: [E.ID] { results.map { $0.id } }

    /// The number of matching entities (ignoring offset and limit). O(1) for one indexed
    /// equality, O(log n) for one indexed range, else one pass over the candidates.
    public var count: Int {
        if conditions.count == 1 {
            if let known = conditions[0].candidates(storage)?.count { return known }
            if let known = conditions[0].rangeCount?(storage) { return known }
        }
        var unordered = self
        unordered.ordering = nil
        var matches = 0
        unordered.forEachMatch(of: unordered.plannedRun()) { _ in
            matches += 1
            return true
        }
        return matches
    }

    /// Whether any entity matches; stops at the first. O(1) for one indexed equality.
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
    public var first: E? { limit(1).results.first }

    private func sortIfNeeded(_ entities: [E]) -> [E] {
        guard let ordering else { return entities }
        // Sorting the enumerated pairs keeps ties in their incoming (insertion) order.
        return entities.enumerated().sorted { lhs, rhs in
            if ordering.areInIncreasingOrder(lhs.element, rhs.element) { return true }
            if ordering.areInIncreasingOrder(rhs.element, lhs.element) { return false }
            return lhs.offset < rhs.offset
        }.map { $0.element }
    }

    private func page(_ entities: [E]) -> [E] {
        if offsetCount == 0, limitCount.map({ $0 >= entities.count }) ?? true { return entities }
        let dropped = entities.dropFirst(offsetCount)
        return Array(limitCount.map { dropped.prefix($0) } ?? dropped)
    }
}

/// A type-erased sequence of IDs (an index walk).
struct AnySequenceOfIDs<E: Entity>: Sequence {
    private let makeIteratorBody: () -> AnyIterator<E.ID>

    init<S: Sequence>(_ sequence: S) where S.Element == E.ID {
        makeIteratorBody = { AnyIterator(sequence.makeIterator()) }
    }

    func makeIterator() -> AnyIterator<E.ID> { makeIteratorBody() }
}

extension SortedMapRange {
    /// The interval a standard range expression describes.
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
