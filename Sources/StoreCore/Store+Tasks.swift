extension Store {
    /// Starts `operation` as a task registered under `key`, resolving a clash with a running
    /// task of the same key by `mode`. Registration is synchronous; a finished task
    /// unregisters itself; every task is cancelled when the store is deallocated.
    ///
    /// `.dropCurrent` cancels every task of the key: the running one and any queued behind
    /// it with `.waitInCurrent`.
    /// - Complexity: O(1) on average; `.dropCurrent` also O(c) for the c tasks it cancels.
    @discardableResult
    public func task<Key: Hashable & Sendable>(
        key: Key, mode: TaskMode = .dropCurrent,
        operation: @escaping @Sendable (ActionContext<State>) async -> Void
    ) -> Task<Void, Never> {
        let context = ActionContext(store: self)
        return tasks.start(key: TaskKey(key), mode: mode) { await operation(context) }
    }

    /// Cancels and unregisters the tasks registered under `key`, if any: the running one and
    /// those queued behind it with `.waitInCurrent`.
    /// - Complexity: O(c) for the c tasks of `key`.
    public func cancel<Key: Hashable & Sendable>(key: Key) {
        tasks.cancel(key: TaskKey(key))
    }

    /// Cancels and unregisters every keyed task, running or queued.
    /// - Complexity: O(n) in the number of tasks.
    public func cancelAll() {
        tasks.cancelAll()
    }

    /// Whether a task is registered under `key` (started and not yet finished or cancelled).
    /// - Complexity: O(1) on average.
    public func isRunning<Key: Hashable & Sendable>(key: Key) -> Bool {
        tasks.isRunning(key: TaskKey(key))
    }

    /// The number of registered keyed tasks, queued ones included.
    /// - Complexity: O(1).
    public var runningTaskCount: Int { tasks.count }

    /// Drives the state from `states`: each element becomes the whole state (a commit named
    /// `name`). The newest sequence wins: following a new one cancels the previous. A state
    /// rejected by middleware is skipped; following stops when the store is deallocated.
    /// - Complexity: one commit per element.
    @discardableResult
    public func follow<States: AsyncSequence & Sendable>(
        _ states: States, name: String = "follow"
    ) -> Task<Void, Never> where States.Element == State, States.Failure == Never {
        task(key: FollowKey(), mode: .dropCurrent) { context in
            for await state in states {
                if Task.isCancelled { return }
                do {
                    try context.commit(name) { $0 = state }
                } catch StoreError.storeDeallocated {
                    return
                } catch {
                    continue
                }
            }
        }
    }

    /// Stops following the sequence started by ``follow(_:name:)``.
    /// - Complexity: O(1).
    public func stopFollowing() {
        cancel(key: FollowKey())
    }
}

/// The task key of ``Store/follow(_:name:)``.
private struct FollowKey: Hashable, Sendable {}
