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
enum Delivery<State: Sendable>: Sendable {
    case changes(Changes<State>, duration: Duration, observers: [ChangeObserver<State>])
    case event(any Sendable, observers: [EventObserver])
}
