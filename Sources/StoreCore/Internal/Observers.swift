/// A registered `Changes` observer.
struct ChangeObserver<State: Sendable>: Sendable {
    let id: UInt64
    let status: ObservationStatus
    let handler: @Sendable (Changes<State>) -> Void
    let onTermination: (@Sendable () -> Void)?
}

/// A registered event observer; `handler` filters the event types it wants.
struct EventObserver: Sendable {
    let id: UInt64
    let status: ObservationStatus
    let handler: @Sendable (any Sendable) -> Void
    let onTermination: (@Sendable () -> Void)?
}

/// One item of the ordered delivery queue, with the observers registered when it was
/// published (a later observer never sees an earlier item).
///
/// Payloads are structs rather than tuples: this code runs unspecialized for the store's
/// state type, and a generic tuple's type metadata is looked up at run time on every
/// commit, far more slowly than a generic struct's.
enum Delivery<State: Sendable>: Sendable {
    case changes(ChangeDelivery<State>)
    case event(EventDelivery)
}

/// A commit's `Changes`, its duration, and the observers to tell.
struct ChangeDelivery<State: Sendable>: Sendable {
    let changes: Changes<State>
    let duration: Duration
    let observers: [ChangeObserver<State>]
}

/// An event and the observers to tell.
struct EventDelivery: Sendable {
    let event: any Sendable
    let observers: [EventObserver]
}
