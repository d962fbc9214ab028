/// The running keyed tasks of a store. Registration happens under the lock before the
/// caller gets the task back, so an immediate `cancel(key:)` always finds it; a finished
/// task removes its own entry unless a newer task took its key.
final class TaskRegistry: Sendable {
    private struct Entry: Sendable {
        let token: UInt64
        let task: Task<Void, Never>
    }

    private struct Registry: Sendable {
        var nextToken: UInt64 = 0
        var entries: [TaskKey: Entry] = [:]
    }

    private let registry = Lock(Registry())

    init() {}

    func start(
        key: TaskKey, mode: TaskMode, operation: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        registry.withLock { registry in
            let previous = registry.entries[key]?.task
            if mode == .ignoreNew, let previous { return previous }
            registry.nextToken += 1
            let token = registry.nextToken
            let task: Task<Void, Never>
            switch mode {
            case .dropCurrent, .ignoreNew:
                previous?.cancel()
                task = Task { [self] in
                    await operation()
                    finished(key: key, token: token)
                }
            case .waitInCurrent:
                task = Task { [self] in
                    await previous?.value
                    await operation()
                    finished(key: key, token: token)
                }
            }
            registry.entries[key] = Entry(token: token, task: task)
            return task
        }
    }

    func cancel(key: TaskKey) {
        let task = registry.withLock { $0.entries.removeValue(forKey: key)?.task }
        task?.cancel()
    }

    func cancelAll() {
        let tasks = registry.withLock { registry in
            defer { registry.entries.removeAll() }
            return registry.entries.values.map { $0.task }
        }
        for task in tasks { task.cancel() }
    }

    func isRunning(key: TaskKey) -> Bool {
        registry.withLock { $0.entries[key] != nil }
    }

    var count: Int { registry.withLock { $0.entries.count } }

    private func finished(key: TaskKey, token: UInt64) {
        registry.withLock { registry in
            if registry.entries[key]?.token == token {
                registry.entries.removeValue(forKey: key)
            }
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
