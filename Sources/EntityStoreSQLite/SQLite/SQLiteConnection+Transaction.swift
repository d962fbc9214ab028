/// Transactions: all-or-nothing execution of a closure.
extension SQLiteConnection {
    /// How a top-level transaction takes its locks.
    package enum TransactionKind: Sendable {
        /// Locks on first read or write; may fail with `SQLITE_BUSY` on the first write.
        case deferred
        /// Takes the write lock at once, so a transaction that writes cannot fail halfway for lock reasons.
        case immediate
        /// Like ``immediate``; in rollback-journal mode also keeps readers out.
        case exclusive

        var beginSQL: String {
            switch self {
            case .deferred: "BEGIN DEFERRED"
            case .immediate: "BEGIN IMMEDIATE"
            case .exclusive: "BEGIN EXCLUSIVE"
            }
        }
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws
    /// or when the COMMIT itself fails (for example on a deferred foreign key).
    ///
    /// Called while a transaction is already open, it uses a SAVEPOINT instead, so a
    /// failing inner body undoes only its own changes; `kind` then has no effect.
    /// - Throws: the error thrown by `body`, or the ``SQLiteError`` of BEGIN, COMMIT or RELEASE.
    /// - Complexity: O(1) on top of `body`, plus the cost of committing its changes.
    package func transaction<R>(
        _ kind: TransactionKind = .immediate, _ body: () throws -> R
    ) throws -> R {
        if isInTransaction {
            return try savepoint(body)
        }
        try execute(kind.beginSQL)
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        let result: R
        do {
            result = try body()
        } catch {
            rollbackIfActive()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            // A failed COMMIT can leave the transaction open; it must not linger.
            rollbackIfActive()
            throw error
        }
        return result
    }

    private func savepoint<R>(_ body: () throws -> R) throws -> R {
        let name = "entitystore_savepoint_\(transactionDepth)"
        try execute("SAVEPOINT \(name)")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let result = try body()
            try execute("RELEASE \(name)")
            return result
        } catch {
            // Errors are ignored here: some failures (SQLITE_FULL, IOERR) already rolled
            // back the whole transaction, and the original error is what matters.
            if isInTransaction {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
            }
            throw error
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so.
    private func rollbackIfActive() {
        guard isInTransaction else { return }
        // The caller is already reporting the error that caused the rollback.
        try? execute("ROLLBACK")
    }
}
