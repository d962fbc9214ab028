import EntityStoreCodec
import Foundation

/// How a full snapshot writes one table's rows: the rows are read, encoded and laid out in
/// column order on a second thread while this one binds them and steps SQLite, so the two
/// halves of the work overlap on two cores instead of taking turns on one.
///
/// A table of fewer than ``rowsForASecondThread`` rows is written on this thread alone:
/// starting a thread costs more than it saves there. Either way the rows reach SQLite in
/// the order `encode` emits them, and the first error (from either side) stops both.
enum RowPipeline {
    /// The fields of one encoded row, as ``TableRowWriter/write(_:)`` takes them.
    typealias Fields = [(name: String, value: EncodedValue)]

    /// Tables with at least this many rows are encoded on a second thread.
    static let rowsForASecondThread = 4_096
    /// Rows per chunk handed over: small enough for a chunk to stay in the cache of the
    /// core that reads it next, large enough for the hand-over's lock to be rare.
    static let rowsPerChunk = 256
    /// Chunks the encoder may run ahead of SQLite.
    static let chunksAhead = 4

    /// One part of the stream of rows in a chunk.
    private enum Part: Sendable {
        /// The next column's value of the row.
        case value(SQLiteValue)
        /// The end of a row.
        case end
        /// The layout grew before the next row (`newColumns` were added), or, last, the
        /// layout all the rows made.
        case layout(TableLayout, newColumns: [Int])
    }

    /// Stops the encoder once SQLite failed (the channel was cancelled).
    private struct Cancelled: Error {}

    /// Writes the rows `encode` emits with `writer`, calling `progress` with the rows
    /// written every 10,000 rows.
    ///
    /// - Parameters:
    ///   - rows: How many rows `encode` will emit (chooses one thread or two).
    ///   - encode: Emits every row's fields in order; runs on a second thread for a large
    ///     table. An error it throws that is not a ``SnapshotError`` becomes
    ///     ``SnapshotError/encodingFailed(table:detail:)``.
    /// - Complexity: O(rows); at most ``chunksAhead`` chunks wait in memory.
    static func write(
        rows: Int, table: String, with writer: inout TableRowWriter, progress: (Int) -> Void,
        encode: @escaping @Sendable (_ emit: (Fields) throws -> Void) throws -> Void
    ) throws(SnapshotError) {
        guard rows >= rowsForASecondThread else {
            do {
                try encode { fields in
                    try writer.write(fields)
                    if writer.rowsWritten % 10_000 == 0 { progress(writer.rowsWritten) }
                }
            } catch {
                throw describe(error, table: table)
            }
            return
        }

        let channel = ChunkChannel<Part>(capacity: chunksAhead)
        let arranger = RowArranger(layout: writer.layout)
        let encoder = Thread {
            produce(into: channel, arranger: arranger, table: table, encode: encode)
            channel.producerExited()
        }
        // As deep a stack as the main thread's: encoding nested values recurses.
        encoder.stackSize = 8 << 20
        encoder.name = "snapshot encoder"
        encoder.start()

        var chunk: [Part] = []
        var row: [SQLiteValue] = []
        var newColumns: [Int] = []
        do {
            while channel.receive(into: &chunk) {
                for part in chunk {
                    switch part {
                    case let .value(value):
                        row.append(value)
                    case .end:
                        try writer.insert(row, newColumns: newColumns)
                        newColumns = []
                        row.removeAll(keepingCapacity: true)
                        if writer.rowsWritten % 10_000 == 0 { progress(writer.rowsWritten) }
                    case let .layout(layout, added):
                        writer.adopt(layout)
                        newColumns += added
                    }
                }
                // Emptied with its capacity kept: the channel hands it back to the encoder.
                chunk.removeAll(keepingCapacity: true)
            }
        } catch {
            channel.cancel()
            _ = channel.waitForProducer()
            throw error.naming(table: table)
        }
        if let failure = channel.waitForProducer() { throw describe(failure, table: table) }
    }

    /// The encoding half: runs `encode`, lays each row out with `arranger` and sends it
    /// through `channel` in chunks, then the final layout; finishes the channel with the
    /// error that stopped it, if any.
    private static func produce(
        into channel: ChunkChannel<Part>, arranger: RowArranger, table: String,
        encode: (_ emit: (Fields) throws -> Void) throws -> Void
    ) {
        var arranger = arranger
        var chunk: [Part] = []
        var rowsInChunk = 0
        var sentLayout = false
        do {
            try encode { fields in
                let added = try arranger.arrange(fields)
                if chunk.capacity == 0 { chunk.reserveCapacity(rowsPerChunk * (arranger.values.count + 1)) }
                // The first row's layout always goes first: the table is created from it,
                // even when declared columns mean the row adds none (its id kind is new).
                if !added.isEmpty || !sentLayout {
                    chunk.append(.layout(arranger.layout, newColumns: added))
                    sentLayout = true
                }
                for value in arranger.values { chunk.append(.value(value)) }
                chunk.append(.end)
                rowsInChunk += 1
                if rowsInChunk == rowsPerChunk {
                    guard channel.send(&chunk) else { throw Cancelled() }
                    rowsInChunk = 0
                }
            }
            chunk.append(.layout(arranger.layout, newColumns: []))
            guard channel.send(&chunk) else { throw Cancelled() }
            channel.finish()
        } catch is Cancelled {
            channel.finish()
        } catch {
            channel.finish(throwing: describe(error, table: table))
        }
    }

    /// `error` as a snapshot error naming `table`.
    private static func describe(_ error: any Error, table: String) -> SnapshotError {
        if let error = error as? SnapshotError { return error.naming(table: table) }
        return .encodingFailed(table: table, detail: String(describing: error))
    }
}
