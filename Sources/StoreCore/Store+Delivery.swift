extension Store {
    /// Delivers queued items in order unless another thread (or an outer frame of this one)
    /// is already doing so; that drainer then delivers what this thread queued.
    /// Handlers run outside the lock, so they may read, commit and observe freely.
    @inlinable
    func drain() {
        let claimed = storage.withLock { storage -> Bool in
            if storage.isDraining || storage.pending.isEmpty { return false }
            storage.isDraining = true
            return true
        }
        guard claimed else { return }
        while true {
            let items = storage.withLock { storage -> [Delivery<State>] in
                let items = storage.pending
                storage.pending.removeAll()
                if items.isEmpty { storage.isDraining = false }
                return items
            }
            if items.isEmpty { return }
            for item in items { deliver(item) }
        }
    }

    @inlinable
    func deliver(_ item: Delivery<State>) {
        switch item {
        case .changes(let delivery):
            if !middleware.isEmpty {
                let record = CommitRecord(name: delivery.changes.name, duration: delivery.duration, changes: delivery.changes)
                for hook in middleware { hook.didCommit?(record) }
            }
            for observer in delivery.observers where observer.status.isActive {
                observer.handler(delivery.changes)
            }
        case .event(let delivery):
            for observer in delivery.observers where observer.status.isActive {
                observer.handler(delivery.event)
            }
        }
    }
}
