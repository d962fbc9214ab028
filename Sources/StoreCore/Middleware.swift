/// Hooks that see every commit of a store.
public struct Middleware<State: Sendable>: Sendable {
    /// Identifies the middleware in logs and errors.
    public let name: String
    /// Runs after a commit body, before publication: may rewrite `next`, or throw to reject
    /// the commit (which then leaves no trace; the error reaches the caller).
    @usableFromInline let willCommit: (@Sendable (_ previous: State, _ next: inout State, _ context: CommitContext) throws -> Void)?
    /// Runs once per published ``Changes``, in version order, before the observers.
    @usableFromInline let didCommit: (@Sendable (CommitRecord<State>) -> Void)?

    /// Creates a middleware from its hooks.
    /// - Parameters:
    ///   - name: identifies the middleware.
    ///   - willCommit: sees `previous` and the proposed `next` of every commit (also each
    ///     commit inside a batch); may modify `next` or throw to reject the commit.
    ///   - didCommit: sees every published transition (one per batch), in version order.
    public init(
        name: String,
        willCommit: (@Sendable (_ previous: State, _ next: inout State, _ context: CommitContext) throws -> Void)? = nil,
        didCommit: (@Sendable (CommitRecord<State>) -> Void)? = nil
    ) {
        self.name = name
        self.willCommit = willCommit
        self.didCommit = didCommit
    }
}

/// What ``Middleware`` learns about a published commit.
public struct CommitRecord<State: Sendable>: Sendable {
    /// The commit's (or batch's) name.
    public let name: String
    /// The time from the start of the body (or batch) to publication.
    public let duration: Duration
    /// The published transition.
    public let changes: Changes<State>

    /// Creates a record.
    public init(name: String, duration: Duration, changes: Changes<State>) {
        self.name = name
        self.duration = duration
        self.changes = changes
    }
}
