/// Something a job can stop by ID: a browse stream or an advertisement.
protocol DNSSDSession: AnyObject {
    func stop()
}
