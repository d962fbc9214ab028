import HashTreeCollections
import StoreCore

/// The rows of a live join at one revision: each row of the query with the entity its
/// reference points to (nil while that entity does not exist). Persistent: O(1) to hand
/// out.
public struct JoinedRows<E: Entity, T: Entity>: RandomAccessCollection, Sendable, Equatable {
    /// The query's rows.
    public let rows: LiveRows<E>
    /// The referenced entities, by ID.
    let referenced: TreeDictionary<T.ID, T>
    let reference: @Sendable (E) -> T.ID

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
    /// Referenced entities that changed, were removed (nil) or now exist, by ID.
    public internal(set) var referenced: [T.ID: T?] = [:]

    /// Whether nothing changed.
    public var isEmpty: Bool { rows.isEmpty && referenced.isEmpty }
}

/// A live join: ``JoinedRows`` and their ``JoinDiff`` per commit.
public typealias LiveJoin<E: Entity, T: Entity> = Live<JoinedRows<E, T>, JoinDiff<E, T>>

/// The engine of a live join: a row engine for the query, plus the referenced entities
/// of its rows with a reference count per ID. The referenced IDs are filed in the
/// watcher registry as they come and go, so a commit to the target table wakes the join
/// only when it touches a referenced entity.
struct JoinEngine<E: Entity, T: Entity>: Sendable {
    var rowsEngine: any RowEngine<E>
    let reference: @Sendable (E) -> T.ID
    let targetTable: String
    private var counts: [T.ID: Int] = [:]
    private var referenced = TreeDictionary<T.ID, T>()
    /// Where added and removed referenced IDs are filed (nil until registered).
    let registration: DynamicRegistration

    init(rowsEngine: any RowEngine<E>, reference: @escaping @Sendable (E) -> T.ID, target: Table<T>, state: EntityState,
         registration: DynamicRegistration) {
        self.rowsEngine = rowsEngine
        self.reference = reference
        self.targetTable = target.name
        self.registration = registration
        let targets = state.storage(named: targetTable, as: T.self)?.rows
        for row in rowsEngine.rows {
            let id = reference(row)
            counts[id, default: 0] += 1
            if counts[id] == 1, let target = targets?[id] { referenced[id] = target.value }
        }
    }

    var value: JoinedRows<E, T> { JoinedRows(rows: rowsEngine.rows, referenced: referenced, reference: reference) }
    var referencedIDs: [WatchKey] { counts.keys.map { WatchKey($0) } }

    mutating func apply(_ changes: Changes<EntityState>) -> JoinDiff<E, T>? {
        let oldRows = rowsEngine.rows
        var diff = JoinDiff<E, T>()
        let targets = changes.current.storage(named: targetTable, as: T.self)?.rows
        var added: [WatchKey] = [], removed: [WatchKey] = []
        func retain(_ id: T.ID) {
            counts[id, default: 0] += 1
            guard counts[id] == 1 else { return }
            referenced[id] = targets?[id]?.value
            added.append(WatchKey(id))
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
        }
        if let rowsDiff = rowsEngine.apply(changes) {
            diff.rows = rowsDiff
            for removal in rowsDiff.removed {
                if let old = oldRows.row(id: removal.id) { release(reference(old)) }
            }
            // An inserted row was not in the old result as such (a restore's diff removes
            // every old row first), so only updated and moved rows release a reference.
            for insertion in rowsDiff.inserted { retain(reference(insertion.entity)) }
            for change in rowsDiff.updated {
                if let old = oldRows.row(id: change.entity.id) { release(reference(old)) }
                retain(reference(change.entity))
            }
            for move in rowsDiff.moved {
                if let old = oldRows.row(id: move.entity.id) { release(reference(old)) }
                retain(reference(move.entity))
            }
        }
        // Referenced entities changed by the commit (a restore may change any of them).
        if changes.current.changeSet.replacedAll {
            for id in counts.keys where referenced[id] != targets?[id]?.value {
                referenced[id] = targets?[id]?.value
                diff.referenced[id] = .some(targets?[id]?.value)
            }
        } else if let targetChanges = changes.current.changeSet.tables[targetTable] as? TableChanges<T> {
            func refresh(_ id: T.ID) {
                guard counts[id] != nil else { return }
                let value = targets?[id]?.value
                guard referenced[id] != value else { return }
                referenced[id] = value
                diff.referenced[id] = .some(value)
            }
            for id in targetChanges.inserted { refresh(id) }
            for id in targetChanges.updated.keys { refresh(id) }
            for id in targetChanges.removed.keys { refresh(id) }
        }
        if !added.isEmpty || !removed.isEmpty { registration.update(adding: added, removing: removed) }
        return diff.isEmpty ? nil : diff
    }
}

/// The handle a join engine files its referenced IDs through: the registry and the
/// join's token.
struct DynamicRegistration: Sendable {
    let registry: WatcherRegistry
    let token: UInt64

    func update(adding: [WatchKey], removing: [WatchKey]) {
        registry.updateDynamicIDs(token, adding: adding, removing: removing)
    }
}

extension EntityStore {
    /// Starts a live join: the rows of `query`, each with the entity of `target` its field
    /// `reference` points to (book -> author), as ``JoinedRows``, with the rows' diff and
    /// the changed referenced entities per commit.
    ///
    /// The query is dispatched as by ``live(_:)``; the referenced entities by ID: a commit
    /// to `target` wakes the join only when it touches an entity one of its rows
    /// references.
    /// - Complexity: creating, as ``live(_:)`` plus O(k) probes; per commit, O(changed
    ///   rows × log k + changed referenced entities).
    public func live<E: Entity, T: Entity>(
        _ query: LiveQuery<E>, joining reference: any KeyPath<E, T.ID> & Sendable, to target: Table<T>
    ) -> LiveJoin<E, T> {
        let watchers = watchers
        let token = watchers.makeToken()
        let registration = DynamicRegistration(registry: watchers, token: token)
        let read: @Sendable (E) -> T.ID = { $0[keyPath: reference] }
        let origin = nextLiveOrigin()
        func make(_ state: EntityState) -> (LiveJoin<E, T>, [WatchKey]) {
            let rows = query.ordering.makeEngine(query, state: state, origin: origin)
            let engine = JoinEngine(rowsEngine: rows, reference: read, target: target, state: state, registration: registration)
            let ids = engine.referencedIDs
            let locked = Lock(engine)
            let live = LiveJoin<E, T>(
                value: engine.value, revision: state.revision,
                initialDiff: { joined in
                    var diff = JoinDiff<E, T>()
                    diff.rows = LiveDiff.replacing(LiveRows(storage: SortedRows<E, UInt64>(), origin: 0, generation: 0), with: joined.rows)
                    return diff
                }
            ) { changes in
                locked.withLock { engine in engine.apply(changes).map { (engine.value, $0) } }
            }
            return (live, ids)
        }
        let state = core.committedState
        let early = make(state)
        let filing = query.filing
        let live = core.withCommittedState { current in
            let (live, ids) = current == state ? early : make(current)
            watchers.register(live, filing: filing, token: token)
            watchers.registerDynamicIDs(live, token: token, table: target.name, ids: ids)
            return live
        }
        live.setUnregister {
            watchers.unregister(token, filing: filing)
            watchers.unregisterDynamicIDs(token)
        }
        return live
    }
}
