/// What a commit body knows about the commit it runs in.
public struct CommitContext: Sendable {
    /// The commit's name (shown in `Changes.name` unless a batch renames it).
    public let name: String
    /// `true` when an earlier commit of the same, still unpublished batch already changed
    /// the state, so a layer above can keep accumulating per-commit metadata.
    public let isContinuation: Bool

    /// Creates a context.
    public init(name: String, isContinuation: Bool) {
        self.name = name
        self.isContinuation = isContinuation
    }
}
