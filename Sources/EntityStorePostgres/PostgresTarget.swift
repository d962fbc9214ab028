#if PostgreSQL
import Foundation
import StoreCore

/// Where a store lives in PostgreSQL: the server, the login, the database, and the schema
/// that holds the store's tables.
///
/// Build it from a `postgres://` URL (``init(url:schema:environment:)``) or from the
/// standard `PG*` variables (``fromEnvironment(_:schema:)``). Its ``description`` never
/// contains the password, so it can be printed and logged.
///
/// A target may list several servers (`postgres://u@primary:5432,standby:5432/db?target_session_attrs=read-write`):
/// each connection tries them in order, as libpq does, and keeps the first that has the
/// ``sessionRole`` asked for, so after a failover new connections find the new primary.
public struct PostgresTarget: Sendable, CustomStringConvertible {
    /// One server of a multi-host target.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// The host name or address.
        public var host: String
        /// The TCP port.
        public var port: Int
        /// A server at `host`:`port`.
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        /// `host:port` (`[address]:port` for IPv6).
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// Which of several servers a connection keeps: libpq's `target_session_attrs`.
    public enum SessionRole: String, Sendable {
        /// The first that answers (libpq's default).
        case any
        /// One that accepts writes: the primary.
        case readWrite = "read-write"
        /// One in read-only mode (a standby, or `default_transaction_read_only`).
        case readOnly = "read-only"
        /// A server not in recovery.
        case primary
        /// A hot standby.
        case standby
        /// A hot standby if one answers, else any.
        case preferStandby = "prefer-standby"
    }

    /// Whether the connection is encrypted, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, plain otherwise (libpq's default).
        case prefer
        /// TLS or no connection. The server's certificate is not verified, as libpq's
        /// `require`; use `verify-ca` or `verify-full` for that.
        case require
        /// TLS with the server's certificate verified against the root certificate
        /// (``PostgresTarget/rootCertificate``, or libpq's `~/.postgresql/root.crt`).
        case verifyCA = "verify-ca"
        /// As ``verifyCA``, and the certificate must name the host.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The login role.
    public var username: String
    /// The password; never printed.
    public var password: String?
    /// The database (the user name when nil, as libpq).
    public var database: String?
    /// The PostgreSQL schema holding the store's tables (default `entitystore`).
    public var schema: String
    /// Encryption.
    public var tls: TLSMode
    /// How long to wait for the server to accept a connection (libpq counts at least 2 s).
    public var connectTimeout: Duration
    /// The longest any one statement, or one message of a `COPY`, may wait for the
    /// server (default 60 s): past it the connection is closed, the server rolls back
    /// what was open, and the operation fails with
    /// ``PostgresStoreError/connectionLost(server:reason:)``. TCP keepalives and
    /// `tcp_user_timeout` (the same duration) also detect a path that silently drops
    /// packets. URL parameter `operation_timeout` (seconds).
    public var operationTimeout: Duration = .seconds(60)
    /// The root certificate file that `verify-ca` and `verify-full` verify the server's
    /// certificate against (libpq's `sslrootcert`; nil: `~/.postgresql/root.crt`).
    public var rootCertificate: String?
    /// Servers tried after ``host``:``port``, in order (the further hosts of a multi-host URL).
    public var fallbackHosts: [Endpoint] = []
    /// Which server of ``endpoints`` a connection keeps (URL parameter `target_session_attrs`).
    public var sessionRole: SessionRole = .any
    /// Whether the target is a pooler in transaction pooling mode, such as pgbouncer's
    /// `pool_mode = transaction` (URL parameter `pool_mode=transaction`): session state does
    /// not last past a transaction there, so connections send no session options (the
    /// server's defaults of PostgreSQL 12 and later already give exact float text and hex
    /// `bytea`) and ``PostgresSync`` does not `LISTEN` through it.
    public var transactionPooling = false
    /// Bytes of rows per `COPY` message of a snapshot (1 MiB). Tests lower it to cross
    /// message boundaries with a few thousand rows instead of tens of thousands.
    var bytesPerCopyMessage = PostgresSnapshotWriter.bytesPerMessage
    /// How long a sync's build of the change log's row index may take (half the operation
    /// timeout when nil). Tests shorten it to outlast it with a log of moderate length, with
    /// an operation timeout no loaded machine reaches.
    var rowIndexBuildLimit: Duration?

    /// Every server, in the order connections try them: ``host``:``port``, then ``fallbackHosts``.
    public var endpoints: [Endpoint] { [Endpoint(host: host, port: port)] + fallbackHosts }

    /// A target from its parts.
    public init(
        host: String = "127.0.0.1", port: Int = 5432, username: String, password: String? = nil, database: String? = nil,
        schema: String = "entitystore", tls: TLSMode = .prefer, connectTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schema = schema
        self.tls = tls
        self.connectTimeout = connectTimeout
    }

    /// Reads `postgres://user:password@host:port/database?sslmode=require&schema=s&connect_timeout=5`
    /// (`postgresql://` too). Parts the URL leaves out come from the `PG*` variables of
    /// `environment`, then from libpq's defaults (localhost, 5432, the user `postgres`).
    /// Several servers are a comma-separated list, `host1:5432,host2:5433` (a host without
    /// a port takes the default one), with `target_session_attrs` choosing among them.
    /// - Throws: ``PostgresStoreError/invalidConfiguration(_:)``, which never quotes the password.
    public init(url: String, schema: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresStoreError) {
        // URLComponents reads one host: the others are cut out first, and read here.
        let (single, extraHosts) = Self.splittingHosts(url)
        guard let components = URLComponents(string: single),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw .invalidConfiguration("expected a URL of the form postgres://user:password@host:port/database")
        }
        var target = try Self.fromEnvironment(environment, schema: schema)
        let defaultPort = target.port
        if let host = components.host, !host.isEmpty {
            // An IPv6 literal comes with its brackets: [::1].
            target.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        }
        if let port = components.port {
            guard (1...65535).contains(port) else { throw .invalidConfiguration("the port must be between 1 and 65535") }
            target.port = port
        }
        target.fallbackHosts = try extraHosts.map { text throws(PostgresStoreError) in try Self.endpoint(text, defaultPort: defaultPort) }
        if let user = components.user?.removingPercentEncoding, !user.isEmpty { target.username = user }
        if let password = components.password?.removingPercentEncoding { target.password = password }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if !path.isEmpty { target.database = path.removingPercentEncoding ?? path }
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode": target.tls = try Self.tlsMode(value)
            case "schema" where schema == nil:
                guard !value.isEmpty else { throw .invalidConfiguration("the schema name is empty") }
                target.schema = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else { throw .invalidConfiguration("connect_timeout must be a positive number of seconds") }
                target.connectTimeout = .seconds(seconds)
            case "operation_timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else {
                    throw .invalidConfiguration("operation_timeout must be a positive number of seconds")
                }
                target.operationTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
            case "sslrootcert": target.rootCertificate = value
            case "user": target.username = value
            case "password": target.password = value
            case "host":
                let hosts = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                target.host = hosts[0]
                target.fallbackHosts = hosts.dropFirst().map { Endpoint(host: $0, port: target.port) }
            case "port":
                var ports: [Int] = []
                for text in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let port = Int(text), (1...65535).contains(port) else { throw .invalidConfiguration("the port must be between 1 and 65535") }
                    ports.append(port)
                }
                // One port serves every host; a list gives each host its own, as libpq.
                guard ports.count == 1 || ports.count == 1 + target.fallbackHosts.count else {
                    throw .invalidConfiguration("\(ports.count) ports for \(1 + target.fallbackHosts.count) hosts")
                }
                target.port = ports[0]
                for index in target.fallbackHosts.indices { target.fallbackHosts[index].port = ports.count == 1 ? ports[0] : ports[index + 1] }
            case "dbname": target.database = value
            case "target_session_attrs":
                guard let role = SessionRole(rawValue: value) else {
                    throw .invalidConfiguration("unknown target_session_attrs '\(value)' (any, read-write, read-only, primary, standby, prefer-standby)")
                }
                target.sessionRole = role
            case "pool_mode":
                guard value == "transaction" || value == "session" else {
                    throw .invalidConfiguration("unknown pool_mode '\(value)' (transaction, session)")
                }
                target.transactionPooling = value == "transaction"
            case "application_name", "schema": break
            default: throw .invalidConfiguration("unknown URL parameter '\(item.name)'")
            }
        }
        self = target
    }

    /// The URL with only the first of its hosts, and the others (`host[:port]` texts).
    private static func splittingHosts(_ url: String) -> (String, [String]) {
        guard let schemeEnd = url.range(of: "://") else { return (url, []) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // The hosts follow the last `@` (a password may hold one).
        let hostsStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hosts = authority[hostsStart...]
        guard hosts.contains(",") else { return (url, []) }
        let parts = hosts.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return (String(url[..<hostsStart]) + parts[0] + String(rest[authorityEnd...]), Array(parts.dropFirst()))
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func endpoint(_ text: String, defaultPort: Int) throws(PostgresStoreError) -> Endpoint {
        var host = Substring(text)
        var port = defaultPort
        let portStart: String.Index? = text.hasPrefix("[")
            ? text.firstIndex(of: "]").flatMap { close in text[close...].firstIndex(of: ":") }
            : text.lastIndex(of: ":")
        if let portStart {
            guard let number = Int(text[text.index(after: portStart)...]), (1...65535).contains(number) else {
                throw .invalidConfiguration("the port must be between 1 and 65535")
            }
            port = number
            host = text[..<portStart]
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .invalidConfiguration("a host of the list is empty") }
        return Endpoint(host: (host.removingPercentEncoding ?? String(host)), port: port)
    }

    /// A target from libpq's variables: `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
    /// `PGDATABASE`, `PGSSLMODE`, `PGCONNECT_TIMEOUT`; unset ones take libpq's defaults.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, schema: String? = nil
    ) throws(PostgresStoreError) -> PostgresTarget {
        var target = PostgresTarget(
            host: "localhost", port: 5432, username: environment["PGUSER"] ?? environment["USER"] ?? "postgres",
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"], schema: schema ?? "entitystore")
        if let host = environment["PGHOST"], !host.isEmpty {
            guard !host.hasPrefix("/") else {
                throw .invalidConfiguration("PGHOST names a socket directory; give a host name or address (a TCP connection)")
            }
            target.host = host
        }
        if let port = environment["PGPORT"], !port.isEmpty {
            guard let number = Int(port), (1...65535).contains(number) else { throw .invalidConfiguration("PGPORT must be between 1 and 65535") }
            target.port = number
        }
        if let mode = environment["PGSSLMODE"], !mode.isEmpty { target.tls = try tlsMode(mode) }
        if let file = environment["PGSSLROOTCERT"], !file.isEmpty { target.rootCertificate = file }
        if let timeout = environment["PGCONNECT_TIMEOUT"], !timeout.isEmpty {
            guard let seconds = Int(timeout), seconds > 0 else { throw .invalidConfiguration("PGCONNECT_TIMEOUT must be a positive number of seconds") }
            target.connectTimeout = .seconds(seconds)
        }
        return target
    }

    private static func tlsMode(_ value: String) throws(PostgresStoreError) -> TLSMode {
        switch value {
        case "disable", "allow": return .disable
        case "prefer": return .prefer
        case "require": return .require
        case "verify-ca": return .verifyCA
        case "verify-full": return .verifyFull
        default: throw .invalidConfiguration("unknown sslmode '\(value)' (disable, prefer, require, verify-ca, verify-full)")
        }
    }

    /// `user@host:port/database schema s` (`host1:port1,host2:port2` for several servers): no password.
    public var description: String {
        "\(username)@\(server)/\(database ?? username) (schema \(schema))"
    }

    /// `host:port` (a comma-separated list for several servers), for errors.
    var server: String {
        endpoints.map(\.description).joined(separator: ",")
    }

    /// libpq's connection parameters for this target: the login, TLS, timeouts and TCP
    /// keepalives, and the session settings the codec relies on (exact float text, hex
    /// `bytea`, UTF-8).
    func libpqParameters() -> [(String, String)] {
        let seconds = max(1, connectTimeout.milliseconds / 1000 + (connectTimeout.milliseconds % 1000 > 0 ? 1 : 0))
        let servers = endpoints
        var parameters: [(String, String)] = [
            ("host", servers.map(\.host).joined(separator: ",")), ("port", servers.map { String($0.port) }.joined(separator: ",")),
            ("user", username), ("dbname", database ?? username),
            ("sslmode", tls.rawValue), ("connect_timeout", String(seconds)), ("application_name", "entitystore"),
            ("client_encoding", "UTF8"),
            ("keepalives", "1"), ("keepalives_idle", "15"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(max(1, operationTimeout.milliseconds))),
        ]
        // A transaction pooler refuses session options at login (pgbouncer: "unsupported
        // startup parameter"); the server's defaults give the same output there.
        if !transactionPooling { parameters.append(("options", "-c extra_float_digits=3 -c bytea_output=hex")) }
        if sessionRole != .any { parameters.append(("target_session_attrs", sessionRole.rawValue)) }
        if let password { parameters.append(("password", password)) }
        if let rootCertificate { parameters.append(("sslrootcert", rootCertificate)) }
        return parameters
    }

    /// Opens one connection, authenticated, within ``connectTimeout``.
    /// - Throws: ``PostgresStoreError`` (unreachable, refused login, TLS unavailable or
    ///   unverified).
    /// - Complexity: one TCP (and TLS) handshake and one authentication round trip.
    func connect() async throws(PostgresStoreError) -> PostgresConnection {
        try await PostgresConnection.connect(to: self)
    }

    /// Connects, runs `body` on the connection's thread, and closes the connection
    /// whatever happens.
    func withSession<R>(_ body: (PostgresSession) throws -> R) async throws(PostgresStoreError) -> R {
        let connection = try await connect()
        do {
            let result = try await connection.run(body)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw PostgresStoreError.from(error, server: server)
        }
    }
}

#endif
