/// The operations shared by ``Store`` and ``ScopedStore``; everything built on them
/// (key-path observation, streams, derived values, scopes, actions) works on both.
public protocol StateStore<State>: AnyObject, Sendable {
    /// The state type.
    associatedtype State: Sendable

    /// The current committed state.
    var state: State { get }
    /// The version of the last published ``Changes`` (0 before any).
    var version: UInt64 { get }
    /// The dependencies handed to actions and tasks started here.
    var dependencies: Dependencies { get }

    /// Applies `body` to a copy of the state and publishes it atomically.
    func commit<Result>(_ name: String, withContext body: (inout State, CommitContext) throws -> Result) throws -> Result

    /// Groups the commits of `body` (on this thread) into one published ``Changes``.
    func batch<Result>(_ name: String, _ body: () throws -> Result) throws -> Result

    /// Registers `handler` for every later published ``Changes``.
    func observe(_ handler: @escaping @Sendable (Changes<State>) -> Void) -> Observation

    /// Registers `handler` and calls `initial` with the state at registration, atomically:
    /// `handler` then receives exactly the changes published after that state.
    ///
    /// `initial` runs while the store is locked: it must be quick and must not call the store.
    /// `onTermination` runs when the underlying store is deallocated.
    func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation

    /// Sends a one-shot event through the ordered delivery queue.
    func send<Event: Sendable>(_ event: Event)
}
