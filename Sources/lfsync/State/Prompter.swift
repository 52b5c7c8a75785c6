import Foundation

/// Asks yes/no questions on the terminal, one at a time, for `serve`.
///
/// Questions come from several streams (connections, offers) but a person
/// answers one at a time, so they queue; `readLine` runs on its own thread,
/// never on Swift's cooperative pool.
final class Prompter: Sendable {
    struct Question: Sendable {
        var text: String
        var answer: @Sendable (Bool) -> Void
    }

    private let questions = AsyncStream<Question>.makeStream()

    /// True when both stdin and stderr are terminals (someone can answer).
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 }

    init() {
        let stream = questions.stream
        Task {
            for await question in stream {
                Console.writeError("\(question.text) [y/N] ")
                let line = await Self.readLineOffPool()
                let yes = line.map { ["y", "yes"].contains($0.trimmingCharacters(in: .whitespaces).lowercased()) } ?? false
                question.answer(yes)
            }
        }
    }

    func ask(_ text: String, answer: @escaping @Sendable (Bool) -> Void) {
        questions.continuation.yield(Question(text: text, answer: answer))
    }

    private static func readLineOffPool() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: readLine()) }
        }
    }
}
