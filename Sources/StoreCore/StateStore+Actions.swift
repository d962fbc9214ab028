extension StateStore {
    /// Applies `action` through `reducer` as one commit named after the action.
    /// - Complexity: the reducer's cost plus one `==` on the state (if `Equatable`).
    public func dispatch<Action: Sendable>(_ action: Action, through reducer: Reducer<State, Action>) throws {
        try commit(String(describing: action), withContext: { state, _ in try reducer.reduce(&state, action) })
    }

    /// Runs an asynchronous action outside the store's lock: it reads dependencies and
    /// state and commits results through its ``ActionContext`` whenever it likes.
    /// - Complexity: that of `operation`.
    @discardableResult
    public func perform<Result: Sendable>(
        _ operation: (ActionContext<State>) async throws -> Result
    ) async rethrows -> Result {
        try await operation(ActionContext(store: self))
    }
}
