/// The keyed tasks of a store. Registration happens under the lock before the caller gets
/// the task back, so an immediate `cancel(key:)` always finds it.
///
/// A key holds a chain of tasks, oldest first: the running one, then those started with
/// `.waitInCurrent` that wait for their predecessor. Cancelling a key, `.dropCurrent`,
/// `cancelAll()` and the store's deinit cancel the whole chain, so no running task is left
/// behind a queued one. A finished task removes its own entry.
final class TaskRegistry: Sendable {
    private struct Entry: Sendable {
        let token: UInt64
        let task: Task<Void, Never>
    }

    private struct Registry: Sendable {
        var nextToken: UInt64 = 0
        var chains: [TaskKey: [Entry]] = [:]
        var count = 0
    }

    private let registry = Lock(Registry())

    init() {}

    /// - Complexity: O(1) on average, plus O(c) to cancel a chain of c tasks (`.dropCurrent`).
    func start(
        key: TaskKey, mode: TaskMode, operation: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        let (task, dropped) = registry.withLock { registry -> (Task<Void, Never>, [Entry]) in
            let chain = registry.chains[key] ?? []
            let newest = chain.last?.task
            if mode == .ignoreNew, let newest { return (newest, []) }
            registry.nextToken += 1
            let token = registry.nextToken
            let task: Task<Void, Never>
            var dropped: [Entry] = []
            switch mode {
            case .dropCurrent, .ignoreNew:
                dropped = chain
                registry.count -= chain.count
                registry.chains[key] = nil
                task = Task { [self] in
                    await operation()
                    finished(key: key, token: token)
                }
            case .waitInCurrent:
                task = Task { [self] in
                    await newest?.value
                    await operation()
                    finished(key: key, token: token)
                }
            }
            registry.chains[key, default: []].append(Entry(token: token, task: task))
            registry.count += 1
            return (task, dropped)
        }
        for entry in dropped { entry.task.cancel() }
        return task
    }

    /// Cancels and unregisters every task of `key`, running or queued.
    /// - Complexity: O(c) for a chain of c tasks.
    func cancel(key: TaskKey) {
        let chain = registry.withLock { registry -> [Entry] in
            let chain = registry.chains.removeValue(forKey: key) ?? []
            registry.count -= chain.count
            return chain
        }
        for entry in chain { entry.task.cancel() }
    }

    /// Cancels and unregisters every task.
    /// - Complexity: O(n) in the number of tasks.
    func cancelAll() {
        let chains = registry.withLock { registry -> [[Entry]] in
            defer {
                registry.chains.removeAll()
                registry.count = 0
            }
            return Array(registry.chains.values)
        }
        for chain in chains {
            for entry in chain { entry.task.cancel() }
        }
    }

    func isRunning(key: TaskKey) -> Bool {
        registry.withLock { $0.chains[key] != nil }
    }

    /// The number of registered tasks, queued ones included.
    var count: Int { registry.withLock { $0.count } }

    private func finished(key: TaskKey, token: UInt64) {
        registry.withLock { registry in
            guard var chain = registry.chains[key],
                  let position = chain.firstIndex(where: { $0.token == token })
            else { return }
            chain.remove(at: position)
            registry.count -= 1
            registry.chains[key] = chain.isEmpty ? nil : chain
        }
    }
}

/// A type-erased task key.
// `@unchecked Sendable` is safe: the only initializer takes a `Hashable & Sendable` value,
// so the wrapped `AnyHashable` only ever holds a Sendable value.
struct TaskKey: Hashable, @unchecked Sendable {
    private let base: AnyHashable

    init<Key: Hashable & Sendable>(_ key: Key) { self.base = AnyHashable(key) }
}
