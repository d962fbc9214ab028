extension StateStore {
    /// A view of the part of the state at `keyPath`: it reads that part, commits through it
    /// (a commit on the scope is a commit on this store) and observes only it (when `Sub` is
    /// `Equatable`, observers run only if the part changed).
    /// - Parameters:
    ///   - keyPath: the part.
    ///   - override: changes the dependencies seen by actions started on the scope.
    /// - Complexity: O(1).
    public func scope<Sub: Sendable>(
        _ keyPath: any WritableKeyPath<State, Sub> & Sendable,
        dependencies override: (inout Dependencies) -> Void = { _ in }
    ) -> ScopedStore<Sub> {
        ScopedStore(
            host: KeyPathHost(parent: self, keyPath: keyPath),
            dependencies: dependencies.with(override))
    }

    /// A view of this whole store with overridden dependencies (for tests or a subtree).
    /// - Complexity: O(1).
    public func withDependencies(_ override: (inout Dependencies) -> Void) -> ScopedStore<State> {
        scope(\State.self, dependencies: override)
    }
}
