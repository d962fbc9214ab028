extension EntityState {
    /// Builds a new state for `schema` by running `body` as one transaction on empty
    /// tables, without a store: how a restore assembles the tables it then swaps in with
    /// ``EntityStore/replaceAll(with:name:)``.
    /// - Throws: what `body` throws, or a reference error if `checkReferences` is set.
    /// - Complexity: the cost of the writes in `body`.
    public static func build(
        schema: Schema, checkReferences: Bool = false, _ body: (Transaction) throws -> Void
    ) throws -> EntityState {
        let transaction = Transaction(state: EntityState(schema: schema))
        defer { transaction.isOpen = false }
        try body(transaction)
        _ = try transaction.finish(checkReferences: checkReferences)
        var state = transaction.state
        state.revision = transaction.revision
        state.changeSet = ChangeSet()
        return state
    }
}
