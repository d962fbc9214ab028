import StoreCore

extension StateStore where State: Equatable {
    /// Runs `operation` (a commit, a dispatched action, an app function) and checks that
    /// the state changed exactly as `expected` describes.
    ///
    /// `expected` mutates a copy of the state before the operation
    /// (``Exhaustivity/exhaustive``: every change must be described) or after it
    /// (``Exhaustivity/nonExhaustive``: only what the description sets is checked).
    /// A failure lists each differing field by its path, with the expected value, the
    /// store's and the one before:
    ///
    /// ```
    /// the state changed differently than described:
    ///   count: expected 2, store has 3 (was 1)
    /// ```
    ///
    /// For an `EntityStore`, whose states compare by identity, use
    /// `EntityStore.assertChanges`, which compares rows.
    /// - Returns: what `operation` returned.
    /// - Complexity: two `==` on the state; on failure, a field-by-field walk of the
    ///   three states through `Mirror`, O(their size).
    @discardableResult
    public func assertChanges<Result>(
        _ exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        of operation: () throws -> Result,
        expected: (inout State) throws -> Void
    ) rethrows -> Result {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let before = state
        let result = try operation()
        let after = state
        var description = exhaustivity == .exhaustive ? before : after
        try expected(&description)
        guard description != after else { return result }
        var lines: [String] = []
        for difference in ValueDiff.differences(description, after) {
            var line = "  \(difference.path.isEmpty ? "state" : difference.path): expected \(difference.old), store has \(difference.new)"
            if let was = ValueDiff.differences(before, after).first(where: { $0.path == difference.path })?.old, was != difference.old {
                line += " (was \(was))"
            }
            lines.append(line)
        }
        if lines.isEmpty {
            lines.append("  the states differ by `==` but not in any field a mirror shows: expected \(ValueDiff.describe(description)), store has \(ValueDiff.describe(after))")
        }
        let heading = exhaustivity == .exhaustive
            ? "the state changed differently than described:" : "the state does not hold what the description sets:"
        FailureReporter.report(([heading] + lines).joined(separator: "\n"), at: location)
        return result
    }

    /// Commits `body` and checks the change; see
    /// `assertChanges(_:of:expected:)`.
    /// - Returns: what `body` returned.
    /// - Complexity: the commit, plus that of `assertChanges`.
    @discardableResult
    public func assertCommit<Result>(
        _ exhaustivity: Exhaustivity = .exhaustive, _ name: String = "commit",
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        _ body: (inout State) throws -> Result,
        expected: (inout State) throws -> Void
    ) throws -> Result {
        try assertChanges(
            exhaustivity, fileID: fileID, filePath: filePath, line: line, column: column,
            of: { try commit(name, body) }, expected: expected)
    }

    /// Dispatches `action` through `reducer` and checks the change; see
    /// `assertChanges(_:of:expected:)`.
    /// - Complexity: the reducer, plus that of `assertChanges`.
    public func assertDispatch<Action: Sendable>(
        _ action: Action, through reducer: Reducer<State, Action>, _ exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        expected: (inout State) throws -> Void
    ) throws {
        try assertChanges(
            exhaustivity, fileID: fileID, filePath: filePath, line: line, column: column,
            of: { try dispatch(action, through: reducer) }, expected: expected)
    }
}
