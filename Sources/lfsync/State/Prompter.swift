import Foundation

/// Asks yes/no questions on the terminal, one at a time, for `serve`.
///
/// Questions come from several streams (connections, offers) but a person
/// answers one at a time, so they queue; `readLine` runs on its own thread,
/// never on Swift's cooperative pool. The queue is bounded and forgets what
/// has expired: a question the engine already answered "no" (its consent
/// timeout ran out while earlier ones were on screen) is never shown, and a
/// device cannot pile up questions faster than a person can read them.
final class Prompter: Sendable {
    struct Question: Sendable {
        var text: String
        /// False once the engine no longer waits for this answer.
        var isOpen: @Sendable () -> Bool
        var answer: @Sendable (Bool) -> Void
    }

    /// Questions waiting for the terminal; more are declined at once.
    static let queueLimit = 16

    private let questions = AsyncStream<Question>.makeStream(bufferingPolicy: .bufferingOldest(Prompter.queueLimit))

    /// True when both stdin and stderr are terminals (someone can answer).
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 }

    init() {
        let stream = questions.stream
        Task {
            for await question in stream where question.isOpen() {
                Console.writeError("\(question.text) [y/N] ")
                let line = await Self.readLineOffPool()
                let yes = line.map { ["y", "yes"].contains($0.trimmingCharacters(in: .whitespaces).lowercased()) } ?? false
                guard question.isOpen() else {
                    Console.writeError("(too late: that question had expired and was answered no)\n")
                    continue
                }
                question.answer(yes)
            }
        }
    }

    /// Queues a question; when the queue is full it is answered "no" at once.
    func ask(_ text: String, isOpen: @escaping @Sendable () -> Bool = { true }, answer: @escaping @Sendable (Bool) -> Void) {
        if case let .dropped(question) = questions.continuation.yield(Question(text: text, isOpen: isOpen, answer: answer)) {
            question.answer(false)
        }
    }

    private static func readLineOffPool() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: readLine()) }
        }
    }
}
