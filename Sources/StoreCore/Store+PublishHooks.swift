extension Store {
    /// Registers `hook` to run inside every later publish, under the store's lock, at the
    /// moment the new state becomes current, and calls `initial` with the committed state
    /// at registration, atomically: `hook` sees exactly the transitions after that state.
    ///
    /// Observers are told later, possibly on another thread (a commit made while a
    /// delivery is in progress is delivered by the thread already delivering). A component
    /// that must pair the current state with every transition that led to it (a saver that
    /// writes change sets up to the state it reports) records them here instead: when
    /// ``committedState`` returns a state, the hooks of every transition up to it have run.
    ///
    /// `hook` and `initial` run under the store's lock: keep them to O(1) bookkeeping and
    /// never call the store from them. The hook stays registered until the returned token
    /// is cancelled or released.
    /// - Complexity: O(n) in the number of hooks to register; each publish calls every hook.
    package func addPublishHook(
        startingWith initial: (State) -> Void, _ hook: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation {
        let status = ObservationStatus()
        let id = storage.withLock { storage in
            storage.nextObserverID += 1
            let id = storage.nextObserverID
            storage.publishHooks.append(PublishHook(id: id, handler: hook))
            initial(storage.state)
            return id
        }
        return Observation(status: status) { [weak self] in
            self?.storage.withLock { storage in
                storage.publishHooks.removeAll { $0.id == id }
            }
        }
    }

    /// Registers `check` to run on every later commit (each commit inside a batch too),
    /// after the body and the middleware, before publication: it sees the state before
    /// and the proposed state, and throws to reject the commit (which then leaves no
    /// trace; the error reaches the committing caller), as a ``Middleware``'s `willCommit`
    /// can, but for a component that joins a store after its creation. It runs on the
    /// committing thread, outside the store's lock; it must not commit on the store. It
    /// stays registered until the returned token is cancelled or released.
    /// - Complexity: O(n) in the number of checks to register; each commit calls every check.
    package func addCommitCheck(
        _ check: @escaping @Sendable (_ previous: State, _ next: State, _ context: CommitContext) throws -> Void
    ) -> Observation {
        let status = ObservationStatus()
        let id = storage.withLock { storage in
            storage.nextObserverID += 1
            let id = storage.nextObserverID
            storage.commitChecks.append(CommitCheck(id: id, handler: check))
            return id
        }
        return Observation(status: status) { [weak self] in
            self?.storage.withLock { storage in
                storage.commitChecks.removeAll { $0.id == id }
            }
        }
    }

    /// The last published state. Unlike ``state``, a batch in progress on the calling
    /// thread does not show through: its commits are not published yet.
    /// - Complexity: O(1).
    package var committedState: State {
        storage.withLock { $0.state }
    }
}
