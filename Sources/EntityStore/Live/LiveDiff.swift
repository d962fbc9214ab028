/// What one commit changed in a live query's rows, as positions in its result.
///
/// Apply it like a table view's batch update: delete the rows at `removed` offsets and
/// the `moved` rows at their `from` offsets (offsets in the old result), then insert the
/// `inserted` rows and the `moved` rows at their `to` offsets (offsets in the new
/// result, ascending), then replace the `updated` rows in place. ``apply(to:)`` does
/// exactly this.
public struct LiveDiff<E: Entity>: Sendable, Equatable {
    /// A row that left the result, at its offset in the old result.
    public struct Removal: Sendable, Equatable {
        /// The offset the row had in the old result.
        public let offset: Int
        /// The row's ID.
        public let id: E.ID

        @inlinable
        init(offset: Int, id: E.ID) {
            self.offset = offset
            self.id = id
        }
    }

    /// A row that entered the result, or an updated row, at its offset in the new result.
    public struct Insertion: Sendable, Equatable {
        /// The offset the row has in the new result.
        public let offset: Int
        /// The row's value after the commit.
        public let entity: E

        @inlinable
        init(offset: Int, entity: E) {
            self.offset = offset
            self.entity = entity
        }
    }

    /// A row that stayed in the result at another position (its sort key changed).
    public struct Move: Sendable, Equatable {
        /// The offset the row had in the old result.
        public let from: Int
        /// The offset the row has in the new result.
        public let to: Int
        /// The row's value after the commit.
        public let entity: E

        @inlinable
        init(from: Int, to: Int, entity: E) {
            self.from = from
            self.to = to
            self.entity = entity
        }
    }

    /// Rows that left, ascending by old offset.
    public internal(set) var removed: [Removal] = []
    /// Rows that entered, ascending by new offset.
    public internal(set) var inserted: [Insertion] = []
    /// Rows that stayed at their position with a new value, ascending by new offset.
    public internal(set) var updated: [Insertion] = []
    /// Rows that moved, ascending by new offset.
    public internal(set) var moved: [Move] = []

    /// An empty diff.
    public init() {}

    /// A diff of these parts, each sorted by its offset.
    @usableFromInline
    init(removed: [Removal], inserted: [Insertion], updated: [Insertion], moved: [Move]) {
        self.removed = removed
        self.inserted = inserted
        self.updated = updated
        self.moved = moved
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && updated.isEmpty && moved.isEmpty }

    /// The number of changed rows.
    public var count: Int { removed.count + inserted.count + updated.count + moved.count }

    /// `old` with this diff applied: the new result.
    /// - Complexity: O(k × changed rows) for k rows, as `Array`'s inserts and removals.
    public func apply(to old: [E]) -> [E] {
        var rows = old
        let deletions = (removed.map { $0.offset } + moved.map { $0.from }).sorted(by: >)
        for offset in deletions where offset < rows.count { rows.remove(at: offset) }
        let insertions = (inserted.map { ($0.offset, $0.entity) } + moved.map { ($0.to, $0.entity) })
            .sorted { $0.0 < $1.0 }
        for (offset, entity) in insertions { rows.insert(entity, at: Swift.min(offset, rows.count)) }
        for update in updated where update.offset < rows.count { rows[update.offset] = update.entity }
        return rows
    }

    /// A diff replacing every row of `old` with every row of `new` (a restore). O(k).
    @usableFromInline
    static func replacing(_ old: LiveRows<E>, with new: LiveRows<E>) -> LiveDiff {
        var diff = LiveDiff()
        diff.removed = old.enumerated().map { Removal(offset: $0.offset, id: $0.element.id) }
        diff.inserted = new.enumerated().map { Insertion(offset: $0.offset, entity: $0.element) }
        return diff
    }
}

/// One delivery of a live query: its value after a commit and how it changed.
public struct LiveUpdate<Value: Sendable, Diff: Sendable>: Sendable {
    /// The value after the commit.
    public let value: Value
    /// What changed since the previous delivery (for the first element of a stream, the
    /// whole value as added).
    public let diff: Diff
    /// The store revision the value reflects.
    public let revision: UInt64

    @inlinable
    init(value: Value, diff: Diff, revision: UInt64) {
        self.value = value
        self.diff = diff
        self.revision = revision
    }
}
