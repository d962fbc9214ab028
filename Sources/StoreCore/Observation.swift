import Synchronization

/// A registration token for an observer.
///
/// The observer stays registered while the token is alive: `cancel()` or releasing the
/// token unregisters it. A suspended observer is skipped: it misses every change delivered
/// while suspended and is not replayed on `resume()`.
public final class Observation: Sendable {
    let status: ObservationStatus
    private let onCancel: Lock<(@Sendable () -> Void)?>

    @usableFromInline
    init(status: ObservationStatus = ObservationStatus(), onCancel: @escaping @Sendable () -> Void) {
        self.status = status
        self.onCancel = Lock(onCancel)
    }

    /// A token for an observer kept by another component (a layer built on this store):
    /// `onCancel` runs once, on `cancel()` or when the token is released. The component
    /// checks ``isSuspended`` and ``isCancelled`` before each delivery.
    public convenience init(onCancel: @escaping @Sendable () -> Void) {
        self.init(status: ObservationStatus(), onCancel: onCancel)
    }

    /// Unregisters the observer; later changes are not delivered. Idempotent.
    /// - Complexity: O(n) in the number of observers of the source.
    public func cancel() {
        status.cancel()
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Pauses delivery: changes published while suspended are skipped, not queued.
    /// - Complexity: O(1).
    public func suspend() { status.suspend() }

    /// Resumes delivery after `suspend()`; has no effect on a cancelled observation.
    /// - Complexity: O(1).
    public func resume() { status.resume() }

    /// Whether `cancel()` was called (or the token was cancelled by its owner).
    public var isCancelled: Bool { status.isCancelled }

    /// Whether delivery is currently paused by `suspend()`.
    public var isSuspended: Bool { status.isSuspended }

    deinit { cancel() }
}

/// The shared flag an observer entry checks before each delivery.
@usableFromInline
package final class ObservationStatus: Sendable {
    private static let active: UInt8 = 0
    private static let suspended: UInt8 = 1
    private static let cancelled: UInt8 = 2
    private let raw = Atomic<UInt8>(0)

    @usableFromInline
    init() {}

    @usableFromInline package var isActive: Bool { raw.load(ordering: .acquiring) == Self.active }
    var isCancelled: Bool { raw.load(ordering: .acquiring) == Self.cancelled }
    var isSuspended: Bool { raw.load(ordering: .acquiring) == Self.suspended }

    func cancel() { raw.store(Self.cancelled, ordering: .releasing) }
    func suspend() {
        _ = raw.compareExchange(expected: Self.active, desired: Self.suspended, ordering: .acquiringAndReleasing)
    }
    func resume() {
        _ = raw.compareExchange(expected: Self.suspended, desired: Self.active, ordering: .acquiringAndReleasing)
    }
}
