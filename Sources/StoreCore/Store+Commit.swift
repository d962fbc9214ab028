import Synchronization

extension Store: StateStore {
    /// Applies `body` to a copy of the state, runs the `willCommit` hooks, and publishes the
    /// result as one ``Changes``. All or nothing: if `body` or a hook throws, the state,
    /// the version and the delivery queue are untouched and events sent by `body` are dropped.
    /// A commit that changes nothing publishes nothing and keeps the version.
    ///
    /// Other threads' commits wait while `body` runs; `body` must not commit on this store
    /// (that throws ``StoreError/nestedCommit(name:)``); use ``batch(_:_:)`` to group commits.
    /// - Complexity: the cost of `body`, the hooks and one `==` on the state (if
    ///   `Equatable`), plus O(k) to snapshot the k observers.
    // Inlinable, with the delivery path it runs, so a client with a concrete state type
    // gets it compiled for that type: generic code looks up the metadata of `Storage`,
    // `Delivery` and `Changes` at run time, several times per commit.
    @inlinable
    @discardableResult
    public func commit<Result>(
        _ name: String = "commit", withContext body: (inout State, CommitContext) throws -> Result
    ) throws -> Result {
        let entry = try acquireWriter(for: name)
        let (base, context, eventMark, checks) = storage.withLock { storage in
            storage.inCommitBody = true
            let base = storage.batch?.working ?? storage.state
            let context = CommitContext(name: name, isContinuation: storage.batch?.changed ?? false)
            return (base, context, storage.deferredEvents.count, storage.commitChecks)
        }
        let start = ContinuousClock.now
        var next = base
        let result: Result
        do {
            result = try body(&next, context)
            for hook in middleware {
                try hook.willCommit?(base, &next, context)
            }
            for check in checks {
                try check.handler(base, next, context)
            }
        } catch {
            storage.withLock { storage in
                storage.inCommitBody = false
                storage.deferredEvents.removeSubrange(eventMark...)
            }
            releaseWriter()
            throw error
        }
        let changed = differs(base, next)
        let duration = ContinuousClock.now - start
        storage.withLock { storage in
            storage.inCommitBody = false
            if storage.batch != nil {
                if changed {
                    storage.batch?.working = next
                    storage.batch?.changed = true
                }
                return
            }
            if changed {
                publish(previous: base, current: next, name: name, duration: duration, in: &storage)
            }
            flushDeferredEvents(in: &storage)
        }
        releaseWriter()
        if entry == .first { drain() }
        return result
    }

    /// Runs `body`, folding every commit it makes on this thread into one ``Changes``
    /// (previous: before the batch, current: after it) published when the outermost batch
    /// ends. Nested batches fold into the outermost. If `body` throws, every commit of this
    /// batch (and of its nested batches) is rolled back and its events are dropped.
    ///
    /// The batch holds the writer gate throughout, so other threads' commits wait until it
    /// ends; their reads see the state before the batch.
    /// - Complexity: the cost of `body`, plus one `==` on the state at the end.
    @discardableResult
    public func batch<Result>(_ name: String = "batch", _ body: () throws -> Result) throws -> Result {
        let entry = try acquireWriter(for: name)
        let saved = storage.withLock { storage -> (working: State, changed: Bool, events: Int)? in
            if let batch = storage.batch {
                return (batch.working, batch.changed, storage.deferredEvents.count)
            }
            storage.batch = BatchState(
                base: storage.state, working: storage.state, name: name, start: ContinuousClock.now)
            return nil
        }
        let result: Result
        do {
            result = try body()
        } catch {
            storage.withLock { storage in
                if let saved {
                    storage.batch?.working = saved.working
                    storage.batch?.changed = saved.changed
                    storage.deferredEvents.removeSubrange(saved.events...)
                } else {
                    storage.batch = nil
                    storage.deferredEvents.removeAll()
                }
            }
            releaseWriter()
            throw error
        }
        if saved == nil {
            let end = ContinuousClock.now
            storage.withLock { storage in
                guard let batch = storage.batch else { return }
                storage.batch = nil
                if batch.changed, differs(batch.base, batch.working) {
                    publish(
                        previous: batch.base, current: batch.working, name: batch.name,
                        duration: end - batch.start, in: &storage)
                }
                flushDeferredEvents(in: &storage)
            }
        }
        releaseWriter()
        if entry == .first { drain() }
        return result
    }

    /// Installs `current`, bumps the version and queues the ``Changes``; called under the lock.
    @inlinable
    func publish(
        previous: State, current: State, name: String, duration: Duration, in storage: inout Storage
    ) {
        storage.state = current
        let version = currentVersion.load(ordering: .relaxed) + 1
        currentVersion.store(version, ordering: .releasing)
        let changes = Changes(previous: previous, current: current, version: version, name: name)
        for hook in storage.publishHooks { hook.handler(changes) }
        storage.pending.append(.changes(ChangeDelivery(changes: changes, duration: duration, observers: storage.changeObservers)))
    }

    /// Queues the events the writer sent during its commit or batch, after its ``Changes``.
    @inlinable
    func flushDeferredEvents(in storage: inout Storage) {
        guard !storage.deferredEvents.isEmpty else { return }
        for event in storage.deferredEvents {
            storage.pending.append(.event(EventDelivery(event: event, observers: storage.eventObservers)))
        }
        storage.deferredEvents.removeAll()
    }
}
