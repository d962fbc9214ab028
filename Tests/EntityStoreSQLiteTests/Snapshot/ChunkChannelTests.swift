import Foundation
import Synchronization
import Testing
@testable import EntityStoreSQLite

/// The hand-off between a restore's decoding threads and the thread building the table.
@Suite("Chunk channel")
struct ChunkChannelTests {
    @Test func chunksArriveInOrderAndEmptiedBuffersComeBack() throws {
        let channel = ChunkChannel<Int>(capacity: 2)
        let sentFull = 50
        let producer = Thread {
            var chunk: [Int] = []
            var recycled = 0
            for number in 0..<sentFull {
                chunk.append(contentsOf: [number * 2, number * 2 + 1])
                guard channel.send(&chunk) else { return }
                // What comes back is empty: a recycled buffer keeps its capacity.
                precondition(chunk.isEmpty)
                if chunk.capacity > 0 { recycled += 1 }
            }
            // Stored before the exit is signalled, which orders it before the test reads it.
            recycledCount.withLock { $0 = recycled }
            channel.finish()
            channel.producerExited()
        }
        producer.start()
        var received: [Int] = []
        var chunk: [Int] = []
        while channel.receive(into: &chunk) {
            received.append(contentsOf: chunk)
            chunk.removeAll(keepingCapacity: true)
        }
        #expect(channel.waitForProducer() == nil)
        #expect(received == Array(0..<(sentFull * 2)))
        #expect(recycledCount.withLock { $0 } > 0)
    }

    @Test func aProducerErrorReachesTheConsumerAfterTheChunksSentBeforeIt() {
        struct Broken: Error {}
        let channel = ChunkChannel<Int>(capacity: 4)
        var chunk = [1, 2]
        #expect(channel.send(&chunk))
        channel.finish(throwing: Broken())
        channel.producerExited()
        var received: [Int] = []
        var incoming: [Int] = []
        while channel.receive(into: &incoming) { received += incoming; incoming.removeAll() }
        #expect(received == [1, 2])
        #expect(channel.waitForProducer() is Broken)
    }

    @Test func aCancelledChannelRefusesChunksAndEndsTheConsumer() {
        let channel = ChunkChannel<Int>(capacity: 1)
        var chunk = [7]
        #expect(channel.send(&chunk))
        channel.cancel()
        var next = [8]
        #expect(!channel.send(&next))
        var incoming: [Int] = []
        #expect(!channel.receive(into: &incoming))
    }
}

/// How many emptied buffers the producer got back, read once it is done.
private let recycledCount = Mutex(0)
