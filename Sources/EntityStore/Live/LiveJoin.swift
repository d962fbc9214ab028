import HashTreeCollections
import StoreCore

/// The rows of a live join at one revision: each row of the query with the entity its
/// reference points to (nil while that entity does not exist). Persistent: O(1) to hand
/// out.
public struct JoinedRows<E: Entity, T: Entity>: RandomAccessCollection, Sendable, Equatable {
    /// The query's rows.
    public let rows: LiveRows<E>
    /// The referenced entities, by ID.
    @usableFromInline let referenced: TreeDictionary<T.ID, T>
    @usableFromInline let reference: @Sendable (E) -> T.ID

    @inlinable
    init(rows: LiveRows<E>, referenced: TreeDictionary<T.ID, T>, reference: @escaping @Sendable (E) -> T.ID) {
        self.rows = rows
        self.referenced = referenced
        self.reference = reference
    }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of rows. O(1).
    public var endIndex: Int { rows.count }

    /// The row at `position` and the entity it references. O(log k).
    public subscript(position: Int) -> (row: E, referenced: T?) {
        let row = rows[position]
        return (row, referenced[reference(row)])
    }

    /// The referenced entity `id`, if a row references it and it exists. O(1) expected.
    public func referenced(_ id: T.ID) -> T? { referenced[id] }

    /// Equal when the rows and the referenced entities are. O(1) for two values of one
    /// live join that did not change; O(k) otherwise.
    public static func == (lhs: JoinedRows, rhs: JoinedRows) -> Bool {
        lhs.rows == rhs.rows && lhs.referenced == rhs.referenced
    }
}

/// What one commit changed in a live join: the rows' diff, and the referenced entities
/// that changed (the rows referencing them show the new value).
public struct JoinDiff<E: Entity, T: Entity>: Sendable, Equatable {
    /// The change of the query's rows.
    public internal(set) var rows = LiveDiff<E>()
    /// Every entry of ``JoinedRows/referenced(_:)`` that differs from before the commit,
    /// by ID: the entity's new value, or nil when there is none now (the entity was
    /// removed, or no row references it any more). Applied to the previous entries, it
    /// gives the new ones.
    public internal(set) var referenced: [T.ID: T?] = [:]

    /// Whether nothing changed.
    public var isEmpty: Bool { rows.isEmpty && referenced.isEmpty }

    @usableFromInline
    init(rows: LiveDiff<E> = LiveDiff(), referenced: [T.ID: T?] = [:]) {
        self.rows = rows
        self.referenced = referenced
    }
}

/// A live join: ``JoinedRows`` and their ``JoinDiff`` per commit.
public typealias LiveJoin<E: Entity, T: Entity> = Live<JoinedRows<E, T>, JoinDiff<E, T>>

/// The engine of a live join: a row engine for the query, plus the referenced entities
/// of its rows with a reference count per ID. The referenced IDs are filed in the
/// watcher registry as they come and go, so a commit to the target table wakes the join
/// only when it touches a referenced entity.
@usableFromInline
struct JoinEngine<E: Entity, T: Entity>: Sendable {
    @usableFromInline let rowsEngine: RowEngineHandle<E>
    @usableFromInline let reference: @Sendable (E) -> T.ID
    @usableFromInline let sourceTable: String
    @usableFromInline let targetTable: String
    @usableFromInline var counts: [T.ID: Int] = [:]
    @usableFromInline var referenced = TreeDictionary<T.ID, T>()
    /// Where added and removed referenced IDs are filed.
    @usableFromInline let registration: DynamicRegistration

    @inlinable
    init(rowsEngine: RowEngineHandle<E>, reference: @escaping @Sendable (E) -> T.ID, source: Table<E>, target: Table<T>,
         state: EntityState, registration: DynamicRegistration) {
        self.rowsEngine = rowsEngine
        self.reference = reference
        self.sourceTable = source.name
        self.targetTable = target.name
        self.registration = registration
        let targets = state.storage(named: targetTable, as: T.self)?.rows
        for row in rowsEngine.rows() {
            let id = reference(row)
            counts[id, default: 0] += 1
            if counts[id] == 1, let target = targets?[id] { referenced[id] = target.value }
        }
    }

    @inlinable
    var value: JoinedRows<E, T> { JoinedRows(rows: rowsEngine.rows(), referenced: referenced, reference: reference) }
    @inlinable
    var referencedIDs: [WatchKey] { counts.keys.map { WatchKey($0) } }

    @inlinable
    mutating func apply(_ commit: DeliveredCommit) -> JoinDiff<E, T>? {
        let targets = commit.current.rows(named: targetTable, as: T.self)
        // The referenced entities before the commit (persistent: O(1) to keep), against
        // which the diff names every entry that changed.
        let before = referenced
        var touched: [T.ID] = []
        let rowsDiff = rowsEngine.apply(commit)
        var added: [WatchKey] = [], removed: [WatchKey] = []
        if commit.replacesAll {
            // A restore, or a raw core commit whose change set does not lead from the
            // previous state: the rows and any referenced entity may have changed.
            var newCounts: [T.ID: Int] = [:]
            for row in rowsEngine.rows() { newCounts[reference(row), default: 0] += 1 }
            var newReferenced = TreeDictionary<T.ID, T>()
            for id in newCounts.keys {
                if let value = targets?[id]?.value { newReferenced[id] = value }
                if counts[id] == nil { added.append(WatchKey(id)) }
                touched.append(id)
            }
            for id in counts.keys where newCounts[id] == nil {
                removed.append(WatchKey(id))
                touched.append(id)
            }
            counts = newCounts
            referenced = newReferenced
        } else {
            let source = commit.table(sourceTable, as: E.self)
            let sourceRows = source?.rows ?? commit.current.rows(named: sourceTable, as: E.self)
            /// The row's value before the commit: the change set's for a changed row, the
            /// table's for one the window let go unchanged.
            func oldValue(_ id: E.ID) -> E? {
                source?.changes.updated[id] ?? source?.removed[id] ?? sourceRows?[id]?.value
            }
            func retain(_ id: T.ID) {
                counts[id, default: 0] += 1
                guard counts[id] == 1 else { return }
                referenced[id] = targets?[id]?.value
                added.append(WatchKey(id))
                touched.append(id)
            }
            func release(_ id: T.ID) {
                guard let count = counts[id] else { return }
                if count > 1 {
                    counts[id] = count - 1
                    return
                }
                counts.removeValue(forKey: id)
                referenced.removeValue(forKey: id)
                removed.append(WatchKey(id))
                touched.append(id)
            }
            if let diff = rowsDiff {
                for removal in diff.removed {
                    if let old = oldValue(removal.id) { release(reference(old)) }
                }
                for insertion in diff.inserted { retain(reference(insertion.entity)) }
                for change in diff.updated {
                    if let old = oldValue(change.entity.id) { release(reference(old)) }
                    retain(reference(change.entity))
                }
                for move in diff.moved {
                    if let old = oldValue(move.entity.id) { release(reference(old)) }
                    retain(reference(move.entity))
                }
            }
            // Referenced entities changed by the commit.
            if let targetChanges = commit.table(targetTable, as: T.self)?.changes {
                func refresh(_ id: T.ID) {
                    guard counts[id] != nil else { return }
                    referenced[id] = targets?[id]?.value
                    touched.append(id)
                }
                for id in targetChanges.inserted { refresh(id) }
                for id in targetChanges.updated.keys { refresh(id) }
                for id in targetChanges.removed.keys { refresh(id) }
            }
        }
        // Every entry of the referenced entities that differs from before, whatever made
        // it differ (a rewritten row may release and retain an ID in one commit while the
        // entity itself changed): what a client applying diffs needs to reach the value.
        var referencedDiff: [T.ID: T?] = [:]
        for id in touched where referencedDiff[id] == nil {
            let new = referenced[id]
            if !ValueIdentity.same(before[id], new) { referencedDiff[id] = .some(new) }
        }
        if !added.isEmpty || !removed.isEmpty { registration.update(adding: added, removing: removed) }
        if rowsDiff == nil, referencedDiff.isEmpty { return nil }
        return JoinDiff(rows: rowsDiff ?? LiveDiff(), referenced: referencedDiff)
    }
}

/// The handle a join engine files its referenced IDs through: the registry and the
/// join's token.
@usableFromInline
struct DynamicRegistration: Sendable {
    @usableFromInline let registry: WatcherRegistry
    @usableFromInline let token: UInt64

    @usableFromInline
    init(registry: WatcherRegistry, token: UInt64) {
        self.registry = registry
        self.token = token
    }

    @usableFromInline
    func update(adding: [WatchKey], removing: [WatchKey]) {
        registry.updateDynamicIDs(token, adding: adding, removing: removing)
    }
}

extension EntityStore {
    /// Starts a live join: the rows of `query`, each with the entity of `target` its field
    /// `reference` points to (book -> author), as ``JoinedRows``, with the rows' diff and
    /// the changed referenced entities per commit.
    ///
    /// The query is dispatched as by ``live(_:)->LiveList<E>``; the referenced entities by ID: a commit
    /// to `target` wakes the join only when it touches an entity one of its rows
    /// references.
    /// - Complexity: creating, as ``live(_:)->LiveList<E>`` plus O(k) probes; per commit, O(changed
    ///   rows × log k + changed referenced entities).
    @inlinable
    public func live<E: Entity, T: Entity>(
        _ query: LiveQuery<E>, joining reference: any KeyPath<E, T.ID> & Sendable, to target: Table<T>
    ) -> LiveJoin<E, T> {
        let read = fieldReader(reference)
        let origin = nextLiveOrigin()
        return registeredJoin(query, target: target) { state, registration in
            let rows = query.makeRowEngine(query, state, origin)
            let engine = JoinEngine(
                rowsEngine: rows, reference: read, source: query.table, target: target, state: state, registration: registration)
            let ids = engine.referencedIDs
            let locked = Lock(engine)
            let live = LiveJoin<E, T>(
                current: { locked.withLock { $0.value } }, revision: state.revision,
                initialDiff: { joined in
                    JoinDiff(rows: LiveDiff.replacing(LiveRows(storage: SortedRows<E, UInt64>(), origin: 0, generation: 0), with: joined.rows))
                },
                step: { commit in
                    locked.withLock { engine in
                        engine.apply(commit).map { LiveJoin<E, T>.Update(value: engine.value, diff: $0, revision: commit.revision) }
                    }
                })
            return JoinBuild(live: live, ids: ids)
        }
    }

    /// Builds a live join with `make` from the last published state and files it under
    /// its query and under the referenced IDs `make` reports, atomically with respect to
    /// commits (as ``registered(filing:_:)``).
    @usableFromInline
    func registeredJoin<E: Entity, T: Entity>(
        _ query: LiveQuery<E>, target: Table<T>, _ make: (EntityState, DynamicRegistration) -> JoinBuild<E, T>
    ) -> LiveJoin<E, T> {
        let watchers = watchers
        let token = watchers.makeToken()
        let registration = DynamicRegistration(registry: watchers, token: token)
        let state = core.committedState
        let early = make(state, registration)
        let filing = query.filing
        let core = core
        let live = core.withCommittedState { current in
            let build = current == state ? early : make(current, registration)
            build.live.start(atVersion: core.version)
            watchers.register(build.live, filing: filing, token: token)
            watchers.registerDynamicIDs(build.live, token: token, table: target.name, ids: build.ids)
            return build.live
        }
        live.setUnregister {
            watchers.unregister(token, filing: filing)
            watchers.unregisterDynamicIDs(token)
        }
        return live
    }
}

/// A live join just built, with the referenced IDs to file it under.
@usableFromInline
struct JoinBuild<E: Entity, T: Entity> {
    @usableFromInline let live: LiveJoin<E, T>
    @usableFromInline let ids: [WatchKey]

    @inlinable
    init(live: LiveJoin<E, T>, ids: [WatchKey]) {
        self.live = live
        self.ids = ids
    }
}
