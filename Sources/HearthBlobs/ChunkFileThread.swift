import Foundation

/// A thread of its own (started with the first item) that hands `handle` what was added since its
/// last turn, in the order added: chunk files' writes and syncs, kept off the request thread.
/// It lives as long as its `ChunkFiles`, that is for the process.
final class ChunkFileThread<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Item] = []
    private var started = false
    private let handle: ([Item]) -> Void

    init(_ handle: @escaping ([Item]) -> Void) { self.handle = handle }

    func add(_ item: Item) {
        condition.lock()
        queue.append(item)
        if !started {
            started = true
            Thread { [self] in run() }.start()
        }
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let batch = queue
            queue = []
            condition.unlock()
            handle(batch)
        }
    }
}
