import EntityStore

/// The state a test expects after a write, described by mutating a copy of the state
/// before it (or, for a non-exhaustive assertion, of the state after it).
///
/// ```swift
/// try store.assertChanges {
///     try library.removeAuthor(1)
/// } expected: { state in
///     state[authors].remove(1)
///     state[books].remove(10)      // the cascade
///     state[books][11]?.editorID = nil  // the nullified reference
/// }
/// ```
///
/// Reads fall through to the underlying state; only the rows the description writes are
/// copied, so describing a change costs O(rows written), whatever the size of the store.
public struct ExpectedState {
    /// The state the description starts from.
    public let base: EntityState
    var tables: [String: any ExpectedTableEdits] = [:]
    /// The description's own mistakes (a table the store lacks, a row the write removed),
    /// each a failure of the assertion.
    let log = DescriptionLog()
    /// For a description of the state after a write: the state before it, to tell a row
    /// the write removed from one that never was.
    let before: EntityState?

    /// A description starting from `base`. O(1).
    public init(base: EntityState) {
        self.init(base: base, before: nil)
    }

    init(base: EntityState, before: EntityState?) {
        self.base = base
        self.before = before
    }

    /// The expected rows of `table`; mutate it to describe the change. A table the store
    /// does not have fails the assertion, naming the store's tables. O(1).
    public subscript<E: Entity>(table: Table<E>) -> ExpectedTable<E> {
        get {
            if let existing = tables[table.name] as? ExpectedTable<E> { return existing }
            if base.schema.table(named: table.name) == nil {
                log.note("the description names the table '\(table.name)', which the store does not have (its tables: \(base.tableNames.joined(separator: ", ")))")
            }
            return ExpectedTable(name: table.name, base: base[table], before: before?[table], log: log)
        }
        set { tables[table.name] = newValue }
    }

    /// The expected rows of the store's table of `E`: the one table whose entities are
    /// `E`. None, or several, fails the assertion (name the table instead). O(tables).
    public subscript<E: Entity>(type: E.Type) -> ExpectedTable<E> {
        get { self[log.table(of: E.self, in: base.schema)] }
        set { self[log.table(of: E.self, in: base.schema)] = newValue }
    }
}

/// What a description did wrong, collected while it runs (its subscripts cannot throw)
/// and reported with the assertion's failure. Used on the test's thread only.
final class DescriptionLog {
    private(set) var problems: [String] = []

    func note(_ problem: String) {
        if !problems.contains(problem) { problems.append(problem) }
    }

    /// The one table of `schema` whose entities are `E`; with none or several, a note, and
    /// a table named `E.tableName` (which the comparison then reports as unknown).
    func table<E: Entity>(of type: E.Type, in schema: Schema) -> Table<E> {
        let candidates = schema.tables.compactMap { $0 as? Table<E> }
        if candidates.count == 1, let only = candidates.first { return only }
        if candidates.isEmpty {
            note("the description names the table of \(E.self), but no table of the store holds \(E.self) (its tables: \(schema.tables.map(\.name).joined(separator: ", ")))")
        } else {
            note("the description names the table of \(E.self), but several tables hold \(E.self) (\(candidates.map(\.name).joined(separator: ", "))): name one, as state[table]")
        }
        return candidates.first ?? Table<E>()
    }
}

/// The rows one table is expected to hold: the underlying table plus the description's
/// inserts, updates and removals.
///
/// Writes do not run the schema's rules: removing an author here removes nothing else,
/// so a cascade the store runs must be described row by row, which is what makes an
/// unexpected cascade visible. Unique indexes are not enforced either.
public struct ExpectedTable<E: Entity> {
    /// The table's name.
    public let name: String
    let base: TableView<E>
    /// The table before the write, when the description starts after it.
    let before: TableView<E>?
    let log: DescriptionLog
    /// The rows the description wrote: a value, or nil for a removal.
    var edits: [E.ID: Edit] = [:]

    enum Edit {
        case set(E)
        case removed

        var value: E? {
            if case .set(let value) = self { value } else { nil }
        }
    }

    init(name: String, base: TableView<E>, before: TableView<E>?, log: DescriptionLog) {
        self.name = name
        self.base = base
        self.before = before
        self.log = log
    }

    /// The expected entity with `id`, if any; setting it inserts, replaces (keeping its
    /// place) or, with nil, removes it. O(1) expected.
    ///
    /// Describing the state after a write (non-exhaustively), reading a row the store does
    /// not hold fails the assertion: `state[books][10]?.price = 11` would otherwise change
    /// nothing and pass, whether the write removed row 10 or it never was.
    public subscript(id: E.ID) -> E? {
        get {
            let found = find(id)
            if found == nil { noteAbsent(id) }
            return found
        }
        set { edits[id] = newValue.map { .set($0) } ?? .removed }
    }

    /// Notes a row the description reads in the state after the write that is not there.
    private func noteAbsent(_ id: E.ID) {
        guard let before, edits[id] == nil else { return }
        let label = "\(name) \(ValueDiff.describe(id))"
        if before.contains(id) {
            log.note("the description changes \(label), which the write removed")
        } else {
            log.note("the description changes \(label), which the store does not have")
        }
    }

    /// The expected entity with `id`, if any. O(1) expected.
    public func find(_ id: E.ID) -> E? {
        if let edit = edits[id] { return edit.value }
        return base.find(id)
    }

    /// Whether an entity with `id` is expected. O(1) expected.
    public func contains(_ id: E.ID) -> Bool { find(id) != nil }

    /// Expects `entity` to be inserted (or to replace the entity with its ID). O(1) expected.
    public mutating func insert(_ entity: E) { edits[entity.id] = .set(entity) }

    /// Expects each of `entities` to be inserted. O(k) expected.
    public mutating func insert(contentsOf entities: some Sequence<E>) {
        for entity in entities { insert(entity) }
    }

    /// Expects `entity` to be inserted or to replace the entity with its ID. O(1) expected.
    public mutating func upsert(_ entity: E) { insert(entity) }

    /// Expects the entity `id` to be changed as `body` changes it; an absent `id` is left
    /// absent (and `body` is not called). O(1) expected plus `body`.
    public mutating func update(_ id: E.ID, _ body: (inout E) throws -> Void) rethrows {
        guard var entity = find(id) else {
            noteAbsent(id)
            return
        }
        try body(&entity)
        edits[id] = .set(entity)
    }

    /// Expects the entity `id` to be removed (only it: no delete rule runs here). O(1) expected.
    public mutating func remove(_ id: E.ID) { edits[id] = .removed }

    /// Expects the entities `ids` to be removed. O(k) expected.
    public mutating func remove(_ ids: some Sequence<E.ID>) {
        for id in ids { remove(id) }
    }

    /// Expects every entity matching `predicate` to be removed.
    /// - Complexity: O(n) over the table.
    public mutating func removeAll(where predicate: (E) throws -> Bool) rethrows {
        for entity in base where edits[entity.id] == nil {
            if try predicate(entity) { edits[entity.id] = .removed }
        }
        for (id, edit) in edits {
            if let value = edit.value, try predicate(value) { edits[id] = .removed }
        }
    }

    /// The expected number of entities. O(rows written).
    public var count: Int {
        var count = base.count
        for (id, edit) in edits {
            let existed = base.contains(id)
            switch edit {
            case .set: if !existed { count += 1 }
            case .removed: if existed { count -= 1 }
            }
        }
        return count
    }
}

/// What the comparison needs of an ``ExpectedTable`` whatever its entity type.
protocol ExpectedTableEdits {
    var isEmpty: Bool { get }
}

extension ExpectedTable: ExpectedTableEdits {
    var isEmpty: Bool { edits.isEmpty }
}
