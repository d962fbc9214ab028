extension StateStore {
    /// A `Derived` of the value at `keyPath`, notifying only when it changed.
    /// - Complexity: one `==` on the value per published commit.
    public func derived<Value: Equatable & Sendable>(_ keyPath: any KeyPath<State, Value> & Sendable) -> Derived<Value> {
        derived(from: keyPath) { $0 }
    }

    /// A `Derived` computing `transform` of the value at `keyPath`; it recomputes only when
    /// that value changed and notifies only when the output changed.
    /// - Complexity: one `==` on the input per published commit; `transform` only on change.
    public func derived<Input: Equatable & Sendable, Output: Equatable & Sendable>(
        from keyPath: any KeyPath<State, Input> & Sendable,
        _ transform: @escaping @Sendable (Input) -> Output
    ) -> Derived<Output> {
        Derived.make(initialInput: state[keyPath: keyPath], transform: transform, sources: [self]) { receive in
            [
                observe(startingWith: { state in receive { $0 = state[keyPath: keyPath] } }, onTermination: nil) {
                    changes in receive { $0 = changes.current[keyPath: keyPath] }
                }
            ]
        }
    }

    /// A `Derived` of two values of the state, computed once per commit that changed either.
    /// - Complexity: two `==` per published commit; `transform` only on change.
    public func derived<A: Equatable & Sendable, B: Equatable & Sendable, Output: Equatable & Sendable>(
        from a: any KeyPath<State, A> & Sendable, _ b: any KeyPath<State, B> & Sendable,
        _ transform: @escaping @Sendable (A, B) -> Output
    ) -> Derived<Output> {
        let read: @Sendable (State) -> Inputs2<A, B> = { Inputs2($0[keyPath: a], $0[keyPath: b]) }
        return Derived.make(
            initialInput: read(state), transform: { transform($0.first, $0.second) }, sources: [self]
        ) { receive in
            [
                observe(startingWith: { state in receive { $0 = read(state) } }, onTermination: nil) { changes in
                    receive { $0 = read(changes.current) }
                }
            ]
        }
    }

    /// A `Derived` of three values of the state, computed once per commit that changed any.
    /// - Complexity: three `==` per published commit; `transform` only on change.
    public func derived<
        A: Equatable & Sendable, B: Equatable & Sendable, C: Equatable & Sendable, Output: Equatable & Sendable
    >(
        from a: any KeyPath<State, A> & Sendable, _ b: any KeyPath<State, B> & Sendable, _ c: any KeyPath<State, C> & Sendable,
        _ transform: @escaping @Sendable (A, B, C) -> Output
    ) -> Derived<Output> {
        let read: @Sendable (State) -> Inputs3<A, B, C> = {
            Inputs3($0[keyPath: a], $0[keyPath: b], $0[keyPath: c])
        }
        return Derived.make(
            initialInput: read(state), transform: { transform($0.first, $0.second, $0.third) }, sources: [self]
        ) { receive in
            [
                observe(startingWith: { state in receive { $0 = read(state) } }, onTermination: nil) { changes in
                    receive { $0 = read(changes.current) }
                }
            ]
        }
    }
}
