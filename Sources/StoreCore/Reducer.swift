/// A synchronous state transition for an action.
public struct Reducer<State, Action>: Sendable {
    /// Applies `action` to `state`; throwing rejects the whole dispatch.
    public let reduce: @Sendable (inout State, Action) throws -> Void

    /// Creates a reducer.
    public init(_ reduce: @escaping @Sendable (inout State, Action) throws -> Void) {
        self.reduce = reduce
    }

    /// A reducer running `reducers` in order on the same state.
    /// - Complexity: the sum of the reducers' costs.
    public static func combine(_ reducers: Reducer...) -> Reducer {
        combine(reducers)
    }

    /// A reducer running `reducers` in order on the same state.
    /// - Complexity: the sum of the reducers' costs.
    public static func combine(_ reducers: [Reducer]) -> Reducer {
        Reducer { state, action in
            for reducer in reducers { try reducer.reduce(&state, action) }
        }
    }

    /// This reducer applied to the part of a larger state at `keyPath`.
    /// - Complexity: this reducer's cost (the part is mutated in place).
    public func lifted<Root>(to keyPath: any WritableKeyPath<Root, State> & Sendable) -> Reducer<Root, Action> {
        let reduce = self.reduce
        return Reducer<Root, Action> { root, action in
            try reduce(&root[keyPath: keyPath], action)
        }
    }
}
