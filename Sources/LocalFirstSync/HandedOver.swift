/// A value an actor hands to threads of its own (the write, verify, install
/// and read queues) without using it meanwhile: the actor only passes it
/// along, and the threads take turns — jobs on one serial queue run in
/// order, and a job for another queue is queued only once the earlier ones
/// have reported back — so no two threads use it at once.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
