#if PostgreSQL
import Foundation
import StoreCore
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy between the tests and the server that injects network faults, as
/// Jepsen's network nemeses do: a delay on every chunk, a blackhole (every byte held,
/// connections stay open: a frozen path or a NAT that dropped its entry), one side
/// dropped (what the client sends vanishes, the server's replies still arrive), and a reset
/// of every open connection (RST, as a load balancer that forgets them).
///
/// Each connection is pumped by a thread of its own with `poll`, so the proxy never uses
/// the cooperative pool. Stopped (and its connections closed) by ``stop()``.
final class FaultProxy: Sendable {
    enum Mode: Sendable, Equatable {
        case pass
        case delay(Duration)
        case blackhole
        case dropToServer
    }

    private struct State {
        var mode = Mode.pass
        var generation = 0
        /// Connections of this generation and older hold every byte for good.
        var frozenThrough = -1
        var stopped = false
        /// The local ports of the open connections to the server (`client_port` in
        /// `pg_stat_activity`), to terminate their backends.
        var upstreamPorts: Set<Int> = []
    }

    /// The proxy's loopback port: connect here instead of the server's.
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Lock(State())

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Sets how bytes travel from now on, for open connections and new ones.
    func set(_ mode: Mode) { state.withLock { $0.mode = mode } }

    /// Resets every open connection (both sides see RST); new ones pass.
    func resetAll() { state.withLock { $0.generation += 1 } }

    /// Freezes every open connection for good (a NAT or load balancer that forgot them:
    /// bytes vanish, no RST, no FIN); new connections pass.
    func freezeOpenConnections() {
        state.withLock { state in
            state.frozenThrough = state.generation
            state.generation += 1
        }
    }

    /// Stops accepting and closes every connection.
    func stop() {
        state.withLock { $0.stopped = true; $0.generation += 1 }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// The local ports of the proxy's open connections to the server.
    var upstreamPorts: [Int] { state.withLock { Array($0.upstreamPorts) } }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(upstream)
                close(client)
                continue
            }
            var local = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(upstream, $0, &length) }
            }
            let localPort = Int(UInt16(bigEndian: local.sin_port))
            let generation = state.withLock { state -> Int in
                state.upstreamPorts.insert(localPort)
                return state.generation
            }
            let thread = Thread { [self] in pump(client, upstream, localPort: localPort, generation: generation) }
            thread.start()
        }
        close(listener)
    }

    /// Forwards bytes both ways until either side closes or a reset comes.
    private func pump(_ client: Int32, _ upstream: Int32, localPort: Int, generation: Int) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var reset = false
        loop: while true {
            let (mode, current, frozen) = state.withLock { ($0.mode, $0.generation, $0.frozenThrough) }
            if state.withLock({ $0.stopped }) { break }
            if generation <= frozen {
                usleep(10_000)
                continue
            }
            if current != generation {
                reset = true
                break
            }
            if mode == .blackhole {
                // Read nothing: the bytes wait in the kernel, the peers see silence.
                usleep(10_000)
                continue
            }
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 20) > 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let from = index == 0 ? client : upstream
                let to = index == 0 ? upstream : client
                let count = read(from, &buffer, buffer.count)
                if count <= 0 { break loop }
                if case let .delay(duration) = mode { usleep(UInt32(duration.components.attoseconds / 1_000_000_000_000 + duration.components.seconds * 1_000_000)) }
                if mode == .dropToServer && index == 0 { continue }
                var sent = 0
                while sent < count {
                    // send with MSG_NOSIGNAL: a peer that reset must be an error here, not a
                    // SIGPIPE that ends the whole test process.
                    let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                    if written <= 0 { break loop }
                    sent += written
                }
            }
        }
        if reset {
            // Linger zero: close sends RST instead of FIN.
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            setsockopt(upstream, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        close(client)
        close(upstream)
        state.withLock { _ = $0.upstreamPorts.remove(localPort) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

struct ProxyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
#endif
