#if PostgreSQL
import CLibPQ
import Foundation
import StoreCore
#if canImport(Glibc)
import Glibc
#endif

/// One connection to PostgreSQL through libpq, driven by a thread of its own.
///
/// libpq's calls wait on the network, and a task must never block a thread of Swift's
/// cooperative pool: every call on the connection runs on its ``ConnectionThread``, in
/// ``run(_:)``, while the calling task is suspended. Inside, a ``PostgresSession`` offers
/// plain synchronous statements, `COPY` and notifications, each bounded by the target's
/// ``PostgresTarget/operationTimeout`` and interruptible: cancelling the calling task
/// wakes the thread, which closes the connection (the server rolls back what was open).
///
/// A connection that timed out, was interrupted or lost its server is *broken*
/// (``isBroken``): every later call fails at once, and its owner opens a new one.
final class PostgresConnection: Sendable {
    /// `host:port` (or the hosts of a multi-host target), for errors.
    let server: String
    private let thread: ConnectionThread
    private let session: SessionBox
    /// The wake-up pipe: a byte written to `wake.write` interrupts the session's waits.
    private let wake: (read: Int32, write: Int32)

    private init(server: String, thread: ConnectionThread, session: SessionBox, wake: (Int32, Int32)) {
        self.server = server
        self.thread = thread
        self.session = session
        self.wake = wake
    }

    deinit {
        let session = self.session
        let wake = self.wake
        let finished = DispatchSemaphore(value: 0)
        thread.enqueue {
            session.value?.finish()
            session.value = nil
            Glibc.close(wake.read)
            Glibc.close(wake.write)
            finished.signal()
        }
        thread.stop()
        // (Never on the connection's own thread, which runs the job after this returns.)
        guard !thread.isCurrent else { return }
        // Waits for the goodbye (libpq's terminate message, and TLS's close, on a socket
        // that never blocks; no call of this connection runs any more): a process that
        // drops its last connection and then exits must not tear down the TLS library
        // while this thread still uses it (a crash at exit).
        finished.wait()
    }

    /// Connects to `target` (libpq's `PQconnectdbParams`, bounded by its
    /// ``PostgresTarget/connectTimeout``), on a new connection thread.
    /// - Throws: ``PostgresStoreError/connectionFailed(server:reason:)`` or
    ///   ``PostgresStoreError/authenticationFailed(server:reason:)``, in one line.
    static func connect(to target: PostgresTarget) async throws(PostgresStoreError) -> PostgresConnection {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw .connectionFailed(server: target.server, reason: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        let thread = ConnectionThread(name: "postgres \(target.server)")
        let box = SessionBox()
        let server = target.server
        let parameters = target.libpqParameters()
        let timeout = target.operationTimeout
        let wakeRead = fds[0]
        let preparesStatements = !target.transactionPooling
        let outcome: Result<Void, PostgresStoreError> = await withCheckedContinuation { continuation in
            thread.enqueue {
                continuation.resume(returning: Result { () throws(PostgresStoreError) in
                    box.value = try PostgresSession.open(
                        parameters: parameters, server: server, operationTimeout: timeout, wake: wakeRead,
                        preparesStatements: preparesStatements)
                })
            }
        }
        let connection = PostgresConnection(server: server, thread: thread, session: box, wake: (fds[0], fds[1]))
        try outcome.get()
        return connection
    }

    /// Whether the connection can no longer be used (lost, timed out, interrupted, closed).
    var isBroken: Bool { session.isBroken.withLock { $0 } }

    /// Runs `body` on the connection's thread with its session, while the calling task
    /// waits; cancelling the task interrupts the session's current wait (the connection is
    /// then broken).
    ///
    /// `body` runs while the caller is suspended and never after `run` returns, so it may
    /// capture what the caller holds.
    /// - Throws: what `body` throws; ``PostgresStoreError/connectionLost(server:reason:)``
    ///   on a broken connection.
    @discardableResult
    func run<R>(_ body: (PostgresSession) throws -> R) async throws -> R {
        try await withoutActuallyEscaping(body) { body in
            let handoff = Handoff(body)
            let session = self.session
            let server = self.server
            return try await withTaskCancellationHandler {
                let result: Handoff<R>.Outcome = await withCheckedContinuation { continuation in
                    thread.enqueue {
                        let outcome: Handoff<R>.Outcome
                        if let open = session.value, !open.broken {
                            open.isCancelled = { handoff.cancelled.withLock { $0 } }
                            outcome = handoff.call(open)
                            open.isCancelled = { false }
                        } else {
                            outcome = .init(.failure(PostgresStoreError.connectionLost(server: server, reason: "the connection is closed")))
                        }
                        if session.value?.broken == true {
                            session.value?.finish()
                            session.value = nil
                            session.isBroken.withLock { $0 = true }
                        }
                        continuation.resume(returning: outcome)
                    }
                }
                return try result.get()
            } onCancel: {
                handoff.cancelled.withLock { $0 = true }
                wakeSession()
            }
        }
    }

    /// Wakes the session out of its current wait, to look whether its call was cancelled.
    private func wakeSession() {
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
    }

    /// Closes the connection (politely: libpq's terminate message) and stops its thread.
    func close() async {
        let session = self.session
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            thread.enqueue {
                session.value?.finish()
                session.value = nil
                session.isBroken.withLock { $0 = true }
                continuation.resume()
            }
        }
    }
}

/// The session of a connection: touched only on the connection's thread, except the
/// `isBroken` flag.
private final class SessionBox: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `value` is read and written only by jobs of the
    // connection's one thread, which run one after another; `isBroken` is behind a lock.
    var value: PostgresSession?
    let isBroken = Lock(false)
}

/// A closure handed to the connection's thread for one call, and its result handed back.
private final class Handoff<R>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the calling task creates it and is suspended until
    // the thread has called `body`, dropped it and produced the outcome; the two never
    // touch it at the same time.
    private var body: ((PostgresSession) throws -> R)?
    /// Set when the calling task is cancelled; the session's waits look at it.
    let cancelled = Lock(false)

    init(_ body: @escaping (PostgresSession) throws -> R) { self.body = body }

    /// What the body returned or threw, carried back across threads.
    struct Outcome: @unchecked Sendable {
        // `@unchecked Sendable` is safe: the thread that made it hands it to the one
        // suspended caller and keeps no reference.
        let result: Result<R, any Error>
        init(_ result: Result<R, any Error>) { self.result = result }
        func get() throws -> R { try result.get() }
    }

    /// Calls the body once and drops it (so `withoutActuallyEscaping` sees it released).
    func call(_ session: PostgresSession) -> Outcome {
        let body = self.body
        self.body = nil
        guard let body else { return Outcome(.failure(CancellationError())) }
        return Outcome(Result { try body(session) })
    }
}

/// A thread that runs enqueued jobs one at a time, in order, until stopped.
final class ConnectionThread: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `jobs` and `stopped` are only touched with
    // `condition` locked; jobs run on the one thread, outside the lock.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var stopped = false
    /// The thread's `pthread_t`, set as it starts (under `condition`).
    private var running: pthread_t?

    init(name: String) {
        let thread = Thread { [self] in loop() }
        thread.name = name
        // As deep a stack as the main thread's: decoding nested values recurses.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func loop() {
        condition.lock()
        running = pthread_self()
        condition.unlock()
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Whether the caller runs on this thread.
    var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Queues `job`. O(1) amortized.
    func enqueue(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the queued jobs ran.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }
}
#endif
