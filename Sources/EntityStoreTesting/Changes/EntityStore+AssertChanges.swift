import EntityStore

extension EntityStore {
    /// Runs `operation` (any code that writes to this store: a `write`, a batch, an app
    /// function) and checks that the store changed exactly as `expected` describes.
    ///
    /// `expected` mutates a copy of the state before the operation
    /// (``Exhaustivity/exhaustive``, the default) or after it
    /// (``Exhaustivity/nonExhaustive``). Exhaustively, every row the operation inserted,
    /// updated or removed must be described, so unexpected cascades, nullified
    /// references and stray writes fail, and a changed field that an index or a relation
    /// reads is marked as such. Non-exhaustively, only the rows the description writes
    /// are checked, and within them only the fields it sets differ from the store's.
    /// (Whether the store's indexes agree with its rows is the library's own invariant,
    /// checked by `assertRoundTrip` and `EntityState.invariantViolations()`, in O(n).)
    ///
    /// A failure names the table, the ID and each field with its values, and is reported
    /// at the caller's line:
    ///
    /// ```
    /// the store changed differently than described:
    ///   books 11: removed, but the description keeps it (a delete rule? 'books.authorID' cascades deletes from authors)
    ///   books 12: updated, but the description does not change it
    ///     editorID: 1 → nil  [reference to authors, on delete nullify; nullified]
    /// ```
    ///
    /// - Returns: what `operation` returned.
    /// - Throws: what `operation` or `expected` throws (the comparison is then skipped).
    /// - Complexity: O(changed rows × fields), whatever the size of the store, when the
    ///   operation's commits chain from the state before it to the state after (their change
    ///   sets are merged as they are published: one commit, a batch, or an app function of
    ///   several commits): about 20 µs for a one-row update of a 10,000-row table in a
    ///   release build (see the benchmarks). When another thread commits meanwhile, or a
    ///   commit replaces everything, O(rows of the tables that changed). The description
    ///   costs O(rows it writes).
    @discardableResult
    public func assertChanges<Result>(
        _ exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        of operation: () throws -> Result,
        expected: (inout ExpectedState) throws -> Void
    ) rethrows -> Result {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let chain = CommitChain(self)
        let before = chain.before
        let result: Result
        do { result = try operation() } catch {
            _ = chain.finish(at: state)
            throw error
        }
        let after = state
        let changeSet = chain.finish(at: after)
        var description = exhaustivity == .exhaustive ? ExpectedState(base: before) : ExpectedState(base: after, before: before)
        try expected(&description)
        let problems = description.log.problems
            + ChangeComparison(before: before, after: after, expected: description, exhaustivity: exhaustivity, changeSet: changeSet).problems()
        if !problems.isEmpty {
            let heading = exhaustivity == .exhaustive
                ? "the store changed differently than described:"
                : "the store does not hold what the description sets:"
            FailureReporter.report(([heading] + problems.map { "  " + $0 }).joined(separator: "\n"), at: location)
        }
        return result
    }

    /// Runs `body` as one `write` and checks that the store changed exactly as `expected`
    /// describes; see `assertChanges(_:of:expected:)`. It `throws` (rather than
    /// `rethrows`) because the write itself can fail whatever `body` does: a write inside
    /// another is refused.
    /// - Returns: what `body` returned.
    /// - Complexity: the write, plus O(changed rows × fields) for the comparison (one
    ///   commit's change set lists the rows).
    @discardableResult
    public func assertWrite<Result>(
        _ exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        _ body: (Transaction) throws -> Result,
        expected: (inout ExpectedState) throws -> Void
    ) throws -> Result {
        try assertChanges(
            exhaustivity, fileID: fileID, filePath: filePath, line: line, column: column,
            of: { try self.write("write", body) }, expected: expected)
    }
}
