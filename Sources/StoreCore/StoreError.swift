/// Errors raised by the store itself (errors thrown by commit bodies, reducers and
/// middleware reach the caller unchanged).
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `commit` or `batch` was called from inside a commit body or a `willCommit` hook.
    /// The outer commit would overwrite the inner one, so the inner call is refused.
    case nestedCommit(name: String)
    /// The store behind an ``ActionContext`` was deallocated before the action committed.
    case storeDeallocated

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .nestedCommit(let name):
            "commit '\(name)' was started inside another commit body or willCommit hook; "
                + "move it after the outer commit, or group both in `batch`"
        case .storeDeallocated:
            "the store was deallocated before the action could commit"
        }
    }
}
