import EntityStore

/// The IDs a test expects a write to have inserted, updated and removed, per table.
///
/// ```swift
/// try store.assertChangeSet {
///     try library.removeAuthor(1)
/// } expected: { changes in
///     changes[authors].removed = [1]
///     changes[books].removed = [10, 11]
/// }
/// ```
public struct ExpectedChangeSet {
    var tables: [String: any ExpectedIDSets] = [:]
    /// The schema the expectation is checked against, when known; naming a table it lacks
    /// fails the assertion.
    let schema: Schema?
    let log = DescriptionLog()

    /// An empty expectation: nothing changed.
    public init() {
        schema = nil
    }

    init(schema: Schema) {
        self.schema = schema
    }

    /// The expected IDs of `table`. A table the store does not have fails the assertion. O(1).
    public subscript<E: Entity>(table: Table<E>) -> ExpectedTableChanges<E> {
        get {
            if let schema, schema.table(named: table.name) == nil {
                log.note("the expectation names the table '\(table.name)', which the store does not have (its tables: \(schema.tables.map(\.name).joined(separator: ", ")))")
            }
            return (tables[table.name] as? ExpectedTableChanges<E>) ?? ExpectedTableChanges()
        }
        set { tables[table.name] = newValue }
    }

    /// The expected IDs of the store's table of `E`: the one table whose entities are `E`.
    /// None, or several, fails the assertion (name the table instead). O(tables).
    public subscript<E: Entity>(type: E.Type) -> ExpectedTableChanges<E> {
        get { self[table(of: E.self)] }
        set { self[table(of: E.self)] = newValue }
    }

    private func table<E: Entity>(of type: E.Type) -> Table<E> {
        guard let schema else { return Table<E>() }
        return log.table(of: E.self, in: schema)
    }
}

/// The IDs one table is expected to have inserted, updated and removed.
public struct ExpectedTableChanges<E: Entity> {
    /// IDs of entities that did not exist before and do after.
    public var inserted: Set<E.ID>
    /// IDs of entities that existed before and after with a different value.
    public var updated: Set<E.ID>
    /// IDs of entities that existed before and no longer do.
    public var removed: Set<E.ID>

    /// Expected IDs; by default none.
    public init(inserted: Set<E.ID> = [], updated: Set<E.ID> = [], removed: Set<E.ID> = []) {
        self.inserted = inserted
        self.updated = updated
        self.removed = removed
    }
}

protocol ExpectedIDSets {}
extension ExpectedTableChanges: ExpectedIDSets {}

extension EntityStore {
    /// Runs `operation` and checks the IDs it inserted, updated and removed, per table.
    ///
    /// The change set checked is the one observers received when `operation` published
    /// one commit or one batch; after several commits it is the net change since the
    /// state before (what one batch would have published). Exhaustively, every table's
    /// three sets must equal the expected ones (tables the expectation leaves alone must
    /// be unchanged); non-exhaustively, each expected ID must be in its set.
    /// - Returns: what `operation` returned.
    /// - Complexity: O(changed IDs) after one commit or batch; O(rows of the changed
    ///   tables) after several commits.
    @discardableResult
    public func assertChangeSet<Result>(
        _ exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        of operation: () throws -> Result,
        expected: (inout ExpectedChangeSet) throws -> Void
    ) rethrows -> Result {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let before = state
        let result = try operation()
        let after = state
        var description = ExpectedChangeSet(schema: schema)
        try expected(&description)
        let source: ChangeSetComparison.Source = after.exactChanges(since: before).map { .changeSet($0) } ?? .states(before, after)
        let problems = description.log.problems
            + ChangeSetComparison(schema: schema, source: source, expected: description, exhaustivity: exhaustivity).problems()
        if !problems.isEmpty {
            FailureReporter.report((["the change set differs from the expected one:"] + problems.map { "  " + $0 }).joined(separator: "\n"), at: location)
        }
        return result
    }
}

/// Checks a change set an observer received (`changes.current.changeSet`) against
/// expected IDs, for `schema`'s tables.
/// - Complexity: O(changed IDs).
public func assertChangeSet(
    _ changeSet: ChangeSet, schema: Schema, _ exhaustivity: Exhaustivity = .exhaustive,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
    expected: (inout ExpectedChangeSet) throws -> Void
) rethrows {
    let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    var description = ExpectedChangeSet(schema: schema)
    try expected(&description)
    let problems = description.log.problems
        + ChangeSetComparison(schema: schema, source: .changeSet(changeSet), expected: description, exhaustivity: exhaustivity).problems()
    if !problems.isEmpty {
        FailureReporter.report((["the change set differs from the expected one:"] + problems.map { "  " + $0 }).joined(separator: "\n"), at: location)
    }
}

/// Compares actual inserted, updated and removed IDs with expected ones.
struct ChangeSetComparison {
    enum Source {
        case changeSet(ChangeSet)
        case states(EntityState, EntityState)
    }

    let schema: Schema
    let source: Source
    let expected: ExpectedChangeSet
    let exhaustivity: Exhaustivity

    func problems() -> [String] {
        var problems: [String] = []
        for table in schema.tables {
            guard let typed = table as? any TypedTable else { continue }
            problems += compare(typed)
        }
        return problems
    }

    private func compare<T: TypedTable>(_ table: T) -> [String] {
        let declaration = table.typed
        let wanted = expected.tables[table.name] as? ExpectedTableChanges<T.Element>
        if exhaustivity == .nonExhaustive && wanted == nil { return [] }
        let actual = actualChanges(declaration)
        let expectedSets = wanted ?? ExpectedTableChanges()
        var problems: [String] = []
        for (kind, want, have) in [
            ("inserted", expectedSets.inserted, actual.inserted), ("updated", expectedSets.updated, actual.updated),
            ("removed", expectedSets.removed, actual.removed),
        ] {
            let missing = want.subtracting(have)
            let extra = exhaustivity == .exhaustive ? have.subtracting(want) : []
            guard !missing.isEmpty || !extra.isEmpty else { continue }
            var parts: [String] = []
            if !missing.isEmpty { parts.append("expected but not \(kind): \(Self.list(missing))") }
            if !extra.isEmpty { parts.append("\(kind) but not expected: \(Self.list(extra))") }
            problems.append("\(table.name) \(kind): \(parts.joined(separator: "; ")) (actual: \(Self.list(have)))")
        }
        return problems
    }

    private func actualChanges<E: Entity>(_ table: Table<E>) -> ExpectedTableChanges<E> {
        switch source {
        case .changeSet(let changeSet):
            let changes = changeSet[table]
            return ExpectedTableChanges(inserted: Set(changes.inserted), updated: Set(changes.updated.keys), removed: Set(changes.removed.keys))
        case .states(let before, let after):
            let old = before[table], new = after[table]
            var result = ExpectedTableChanges<E>()
            guard old.version != new.version || old.count != new.count else { return result }
            for entity in new {
                if let previous = old.find(entity.id) {
                    if !ValueIdentity.same(previous, entity) { result.updated.insert(entity.id) }
                } else {
                    result.inserted.insert(entity.id)
                }
            }
            for entity in old where !new.contains(entity.id) { result.removed.insert(entity.id) }
            return result
        }
    }

    static func list<ID>(_ ids: Set<ID>) -> String {
        ids.isEmpty ? "none" : "[" + ids.map { ValueDiff.describe($0) }.sorted().joined(separator: ", ") + "]"
    }
}
