#if PostgreSQL
import Foundation
import StoreCore

/// A sync's kept connection to one target, and which server answered it last.
///
/// A new connection may reach another server than the last one did: after a failover (a
/// multi-host target finds the promoted standby), or a restart. Either may have lost
/// commits it acknowledged (asynchronous replication, `synchronous_commit=off`), so every
/// new connection reads the server's incarnation, its postmaster's start time, and the
/// link notes a change for ``PostgresSync`` to act on.
final class ServerLink: Sendable {
    /// The target connections are opened to.
    let target: PostgresTarget
    private let state = Lock(LinkState())

    private struct LinkState {
        var connection: PostgresConnection?
        /// The start time of the server's postmaster, as the last new connection read it.
        var incarnation: String?
        /// The server changed since ``takeServerChange()`` last looked.
        var changed = false
    }

    init(target: PostgresTarget) {
        self.target = target
    }

    /// The open connection, or a new one (reading its server's incarnation).
    /// - Complexity: O(1) when open; else a connection and one round trip.
    func connection() async throws(PostgresStoreError) -> PostgresConnection {
        if let open = state.withLock({ $0.connection }), !open.isBroken { return open }
        let connection = try await target.connect()
        let incarnation: String
        do {
            incarnation = try await connection.run { session in
                try session.execute("SELECT pg_postmaster_start_time()::text").string(0, 0) ?? ""
            }
        } catch {
            await connection.close()
            throw PostgresStoreError.from(error, server: target.server)
        }
        state.withLock { state in
            if let known = state.incarnation, known != incarnation { state.changed = true }
            state.incarnation = incarnation
            state.connection = connection
        }
        return connection
    }

    /// Whether a new connection reached another server (or a restarted one) since the last
    /// call; clears the note.
    func takeServerChange() -> Bool {
        state.withLock { state in
            defer { state.changed = false }
            return state.changed
        }
    }

    /// Runs `body` on the link's connection (opened if needed, dropped once broken so the
    /// next call reconnects). Errors of the connection are ``PostgresStoreError``s; others
    /// (an app's, thrown by its write) pass through unchanged.
    func run<R>(_ body: (PostgresSession) throws -> R) async throws -> R {
        let connection = try await self.connection()
        do {
            return try await connection.run(body)
        } catch let error as PostgresStoreError {
            dropIfBroken(connection)
            throw PostgresStoreError.from(error, server: target.server)
        } catch is CancellationError {
            dropIfBroken(connection)
            throw PostgresStoreError.from(CancellationError(), server: target.server)
        } catch {
            dropIfBroken(connection)
            throw error
        }
    }

    private func dropIfBroken(_ connection: PostgresConnection) {
        guard connection.isBroken else { return }
        state.withLock { if $0.connection === connection { $0.connection = nil } }
    }

    /// Closes the connection (the next call opens a new one).
    func close() async {
        if let connection = state.withLock({ state in defer { state.connection = nil }; return state.connection }) {
            await connection.close()
        }
    }
}
#endif
