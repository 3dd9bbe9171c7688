import NIOCore

/// Proving the connection alive (``APNsLiveness``): a timer looks at its silence, PINGs go out when it has
/// been silent too long, and a PING without its ACK in time ends the connection as dead.
extension APNsHTTP2Handler {
    /// Looks at the connection's silence again after ``APNsLiveness/checkInterval``.
    func scheduleLivenessCheck(context: ChannelHandlerContext) {
        self.livenessCheck = context.eventLoop.assumeIsolated().scheduleTask(in: self.liveness.checkInterval) { [weak self] () -> Void in
            self?.checkLiveness()
        }
    }

    /// Gives the connection up unless the server's SETTINGS arrive within the settings timeout (no PING
    /// can be answered before them); cancelled by their arrival.
    func scheduleSettingsDeadline(context: ChannelHandlerContext) {
        self.settingsDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: self.liveness.settingsTimeout) { [weak self] () -> Void in
            guard let self, !self.settingsReceived else { return }
            let seconds = Double(self.liveness.settingsTimeout.nanoseconds) / 1e9
            self.connectionDead("no TLS handshake and SETTINGS from the server within \(seconds) s of connecting")
        }
    }

    /// Sends a PING when the connection has been silent for the ping interval, or for the ping timeout
    /// while requests are out; then looks again later.
    func checkLiveness() {
        guard let context = self.context, self.failure == nil, context.channel.isActive else { return }
        if self.outstandingPing == nil, self.settingsReceived {
            let silence = context.eventLoop.now - self.lastHeard
            if silence >= self.liveness.pingInterval || (!self.streams.isEmpty && silence >= self.liveness.pingTimeout) {
                self.sendPing(context: context)
            }
        }
        self.scheduleLivenessCheck(context: context)
    }

    /// Sends a PING whose ACK must arrive within the ping timeout.
    func sendPing(context: ChannelHandlerContext) {
        guard self.outstandingPing == nil, self.failure == nil else { return }
        self.pingsSent &+= 1
        // Distinct per PING, so an ACK of an earlier one (there is none outstanding) cannot answer it.
        let payload = 0x7067_6174_0000_0000 | self.pingsSent
        self.outbound.writeHTTP2FrameHead(length: 8, type: .ping, streamID: 0)
        self.outbound.writeInteger(payload)
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(in: self.liveness.pingTimeout) { [weak self] () -> Void in
            self?.pingMissed()
        }
        self.outstandingPing = (payload, timeout)
        self.scheduleFlush(context: context)
        self.onLivenessEvent?(.pingSent)
    }

    /// A PING ACK arrived: the connection is alive, and streams held for it may open.
    func pingAcknowledged(_ payload: UInt64?, context: ChannelHandlerContext) {
        guard let ping = self.outstandingPing, ping.payload == payload else { return }  // not ours, or late
        ping.timeout.cancel()
        self.outstandingPing = nil
        if self.verifying {
            self.verifying = false
            self.openWaitingStreams(context: context)
            self.scheduleFlush(context: context)
        }
    }

    /// The PING's ACK did not arrive in time.
    func pingMissed() {
        guard self.outstandingPing != nil else { return }
        self.outstandingPing = nil
        self.onLivenessEvent?(.pingMissed)
        let seconds = Double(self.liveness.pingTimeout.nanoseconds) / 1e9
        self.connectionDead("no PING ACK within \(seconds) s")
    }

    /// Gives the connection up without a word to a server that no longer hears: the streams that were
    /// out fail as `connectionLost` (the server may have them), those that never left as `notProcessed`
    /// (they can go on another connection), and the connection closes.
    func connectionDead(_ why: String) {
        guard self.failure == nil, let context = self.context else { return }
        self.failure = why
        self.inbound = nil
        self.stopLivenessTimers()
        self.stopTakingStreams()
        for stream in self.streams.values.sorted(by: { $0.id < $1.id }) {
            self.close(stream, failing: stream.isOpen ? .connectionLost(why) : .notProcessed(why), context: context)
        }
        context.close(promise: nil)
    }

    /// Cancels the liveness timers (the connection is closing).
    func stopLivenessTimers() {
        self.settingsDeadline?.cancel()
        self.settingsDeadline = nil
        self.livenessCheck?.cancel()
        self.livenessCheck = nil
        self.outstandingPing?.timeout.cancel()
        self.outstandingPing = nil
    }
}
