/// Every task the engine runs, as children of one task group — the shape of
/// swift-service-lifecycle's `ServiceGroup`: the accept loop, each connection's loops, the
/// handshakes, each push's jobs. Nothing the engine starts outlives it: `stop()` closes the
/// group to new work and returns once every child has ended.
///
/// The group's own task is the one root the engine creates (with the engine, since its API
/// is called from anywhere and returns while work goes on); everything else is started with
/// `spawn` and is its child: cancelling the root cancels all of it.
final class EngineTasks: Sendable {
    typealias Job = @Sendable () async -> Void

    private let intake: AsyncStream<Job>.Continuation
    private let root: Task<Void, Never>

    init() {
        let (jobs, intake) = AsyncStream<Job>.makeStream()
        self.intake = intake
        root = Task {
            await withDiscardingTaskGroup { group in
                for await job in jobs { group.addTask(operation: job) }
            }
        }
    }

    /// Starts `job` as a child of the engine's group. False, and the job does not run,
    /// once the engine has stopped.
    @discardableResult
    func spawn(_ job: @escaping Job) -> Bool {
        if case .terminated = intake.yield(job) { return false }
        return true
    }

    /// Takes no more jobs and waits until every running one has ended; with `cancelling`,
    /// cancels them first.
    func stop(cancelling: Bool) async {
        intake.finish()
        if cancelling { root.cancel() }
        await root.value
    }
}
