import HashTreeCollections

/// Range conditions and sorting on the fields of dynamic records, in `JSONValue`'s total
/// order (`null < bool < number < string < array < object`; see ``JSONValue/<(_:_:)``),
/// answered by an ordered index on the field when one is declared
/// (`.index(.ordered, field: "year")`).
extension Query where E == DynamicRecord {
    /// Keeps records whose field `field` lies in `range` (`"id"` reads the ID), using an
    /// ordered index on the field when one is declared.
    ///
    /// - A record without the field never matches (`null` is a value, a missing field is not).
    /// - A two-sided range holds what lies between its bounds in the total order. A
    ///   one-sided range stays within the kind of its bound: `1970...` holds the numbers
    ///   from 1970 up but no string, `..<"m"` the strings before `"m"`.
    /// - Numbers compare by value, an integer just before the double of equal value, so
    ///   `...1979` leaves out `1979.0` and `..<1980` takes it.
    /// - Complexity: O(log n + k) for k matches with an ordered index on the field; a scan
    ///   of the table otherwise (or when another condition of the query is used instead).
    public func `where`<Bounds: RangeExpression<JSONValue> & Sendable>(field: String, in range: Bounds) -> Query {
        let bounds = SortedMapRange(withinKindOf: range)
        return adding(Condition(
            description: "\(field) in \(bounds.jsonDescription)",
            matches: { $0[field: field].map(bounds.contains) ?? false },
            candidates: { storage in
                storage.orderedIndex(JSONValue.self, at: storage.indexPositions(forField: field))?.ids(in: bounds)
            }))
    }

    /// Orders the records by their field `field` (`"id"` reads the ID), ascending unless
    /// `descending`; ties keep insertion order. Records without the field come last in
    /// either direction, in insertion order.
    ///
    /// - Complexity: with an ordered index on the field and no index answering a condition,
    ///   the query streams in index order and stops at the limit: O(log n + k) for the first
    ///   k records that have the field (reaching those that lack it scans the table once).
    ///   Otherwise O(m log m) over the m candidates.
    public func sorted(byField field: String, descending: Bool = false) -> Query {
        let increasing: @Sendable (DynamicRecord, DynamicRecord) -> Bool = { lhs, rhs in
            switch (lhs[field: field], rhs[field: field]) {
            case let (left?, right?): descending ? right < left : left < right
            case (.some, nil): true
            case (nil, _): false
            }
        }
        let indexOrder: @Sendable (TableStorage<DynamicRecord>) -> AnySequenceOfIDs<DynamicRecord>? = { storage in
            guard let index = storage.orderedIndex(JSONValue.self, at: storage.indexPositions(forField: field)) else {
                return nil
            }
            // The index holds exactly the records that have the field; the others follow.
            let lacking = storage.order.lazy.compactMap { entry -> RecordID? in
                storage.rows[entry.value].flatMap { $0.value.fields[field] == nil ? entry.value : nil }
            }
            return AnySequenceOfIDs([AnySequence(index.allIDs(descending: descending)), AnySequence(lacking)].joined())
        }
        var copy = self
        copy.ordering = Ordering(
            describe: { field + (descending ? " desc" : "") }, areInIncreasingOrder: increasing, indexOrder: indexOrder)
        return copy
    }
}

extension TableView where E == DynamicRecord {
    /// Records sorted by their field `field`, at most `limit` of them; records without the
    /// field come last (see ``Query/sorted(byField:descending:)``).
    /// - Complexity: O(log n + k) with an ordered index on the field; O(n log n) without one.
    public func sorted(byField field: String, descending: Bool = false, limit: Int? = nil) -> [DynamicRecord] {
        var query = query().sorted(byField: field, descending: descending)
        if let limit { query = query.limit(limit) }
        return query.results
    }
}

extension SortedMapRange where Key == JSONValue {
    /// The interval `range` describes, a one-sided range kept within the kind of its bound
    /// (`1970...` ends before the strings, `..<"m"` starts at `""`).
    init(withinKindOf range: some RangeExpression<JSONValue>) {
        self.init(bounding: range)
        if lowerBound == nil, let upper = upperBound {
            lowerBound = .included(upper.key.leastOfKind)
        }
        if upperBound == nil, let lower = lowerBound, let next = lower.key.leastOfNextKind {
            upperBound = .excluded(next)
        }
    }

    /// `[1970, 1980)`-style, with serialized JSON bounds (`-inf` for the least number and
    /// `...` for no bound), for query plans.
    var jsonDescription: String {
        func text(_ key: JSONValue) -> String {
            if case .double(let number) = key, !number.isFinite { return "\(number)" }
            return key.serialized()
        }
        let lower = switch lowerBound {
        case .included(let key)?: "[" + text(key)
        case .excluded(let key)?: "(" + text(key)
        case nil: "(..."
        }
        let upper = switch upperBound {
        case .included(let key)?: text(key) + "]"
        case .excluded(let key)?: text(key) + ")"
        case nil: "...)"
        }
        return lower + ", " + upper
    }
}
