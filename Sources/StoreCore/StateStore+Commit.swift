extension StateStore {
    /// Applies `body` to a copy of the state and publishes it atomically (see
    /// ``Store/commit(_:withContext:)``).
    /// - Complexity: the cost of `body` plus one `==` on the state (if `Equatable`).
    @discardableResult
    public func commit<Result>(_ name: String = "commit", _ body: (inout State) throws -> Result) throws -> Result {
        try commit(name, withContext: { state, _ in try body(&state) })
    }
}
