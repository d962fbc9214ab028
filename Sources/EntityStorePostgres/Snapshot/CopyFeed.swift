#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// What the encoding thread of a push hands to the task that runs the `COPY`.
enum CopyPiece: Sendable {
    /// Whole rows in `COPY` text format, for the columns of the last layout.
    case rows([UInt8])
    /// The next rows need the table changed first (columns added or retyped): the `COPY`
    /// ends, the changes are made, and a new `COPY` names the layout's columns. Before any
    /// rows, it is the layout the table is created with.
    case layout(WriteLayout, changes: [WriteLayout.Change])
    /// Every row was sent; the final layout (kinds and nullability of all the rows).
    case done(WriteLayout)
}

/// A bounded hand-off of ``CopyPiece``s from the encoding thread to the connection's
/// thread, which sends them: the encoder waits while `capacity` pieces wait; the sender
/// waits while none does. Both sides are threads of their own, so both may block.
final class CopyFeed: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every stored property is read and written only while
    // `condition` is locked.
    private let condition = NSCondition()
    private let capacity: Int
    private var pieces: [CopyPiece] = []
    private var head = 0
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Hands over `piece`, waiting while the feed is full; false once the sender gave up.
    func send(_ piece: CopyPiece) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while pieces.count - head >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        pieces.append(piece)
        condition.broadcast()
        return true
    }

    /// Ends the feed, with the error that stopped the encoder if any.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the encoder at its next `send`, and the sender's waiting `next()`.
    func cancel() {
        condition.lock()
        cancelled = true
        pieces = []
        head = 0
        condition.broadcast()
        condition.unlock()
    }

    /// The next piece, waiting while none is ready; nil once the feed finished and every
    /// piece was taken.
    /// - Throws: the error the encoder finished with, or `CancellationError` after ``cancel()``.
    func next() throws -> CopyPiece? {
        condition.lock()
        defer { condition.unlock() }
        while head == pieces.count && !finished && !cancelled { condition.wait() }
        if cancelled { throw CancellationError() }
        if head < pieces.count {
            let piece = pieces[head]
            head += 1
            if head == pieces.count {
                pieces.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.broadcast()
            return piece
        }
        if let failure { throw failure }
        return nil
    }
}

/// The encoding half of a push of one table: runs on a thread of its own, takes the rows
/// through the table's own loop (compiled for its entity type), lays them out and writes
/// them as `COPY` text into buffers of about `bytesPerPiece`.
struct CopyEncoder<E: Entity>: Sendable {
    let view: TableView<E>
    let bulk: BulkOperations<E>
    let table: String
    let initialLayout: WriteLayout
    let dynamic: DynamicKinds?
    let revision: Int64
    let bytesPerPiece: Int

    init(
        view: TableView<E>, bulk: BulkOperations<E>, table: String, dateFields: Set<String>, revision: Int64, bytesPerPiece: Int
    ) throws(PostgresStoreError) {
        self.view = view
        self.bulk = bulk
        self.table = table
        self.revision = revision
        self.bytesPerPiece = bytesPerPiece
        if let records = view as? TableView<DynamicRecord> {
            let kinds = try DynamicKinds(records: records, table: table, dateFields: dateFields)
            self.dynamic = kinds
            self.initialLayout = kinds.layout
        } else {
            self.dynamic = nil
            self.initialLayout = WriteLayout(table: table)
        }
    }

    /// Starts the thread; its pieces arrive through the returned feed.
    func start() -> CopyFeed {
        let feed = CopyFeed(capacity: 4)
        let thread = Thread { [self] in
            do {
                try run(into: feed)
                feed.finish()
            } catch is CancellationError {
                feed.finish()
            } catch {
                feed.finish(throwing: error)
            }
        }
        // As deep a stack as the main thread's: encoding nested values recurses.
        thread.stackSize = 8 << 20
        thread.name = "push encoder"
        thread.start()
        return feed
    }

    private func run(into feed: CopyFeed) throws {
        let encoder = RowEncoder(dialect: .postgres)
        var layout = initialLayout
        var row: [StoredValue] = []
        var buffer: [UInt8] = []
        buffer.reserveCapacity(bytesPerPiece + 4096)
        var first = true
        func send(_ piece: CopyPiece) throws {
            guard feed.send(piece) else { throw CancellationError() }
        }
        func flush() throws {
            guard !buffer.isEmpty else { return }
            try send(.rows(buffer))
            buffer = []
            buffer.reserveCapacity(bytesPerPiece + 4096)
        }
        try bulk.forEach(view) { entity in
            let fields = try RowFields<E>.of(entity, encoder: encoder, dynamic: dynamic, table: table)
            let changes = try layout.absorb(fields)
            if first || !changes.isEmpty {
                // The table starts with the first row's columns; later ones end the COPY.
                try flush()
                try send(.layout(layout, changes: first ? [] : changes))
                first = false
            }
            layout.values(fields, into: &row)
            CopyText.appendRow(row, revision: revision, to: &buffer)
            if buffer.count >= bytesPerPiece { try flush() }
        }
        try flush()
        try send(.done(layout))
    }
}
#endif
