import PushgateCore
public import PushgateStore
import SQLiteNIO

// Device registrations in SQLite.
extension SQLiteStore {
    public func saveDevice(_ device: DeviceRegistration) async throws {
        _ = try await self.run(on: self.writer, StoreStatements.upsertDevice, Self.binds(device))
    }

    public func saveDevices(_ devices: [DeviceRegistration]) async throws {
        let unique = devices.keepingLastPerDevice()
        guard !unique.isEmpty else { return }
        let connection = self.writer
        try await self.writes.run {
            try await Self.inTransaction(connection) {
                for chunk in unique.chunked(by: StoreStatements.upsertDevicesChunkSize) {
                    _ = try await Self.query(connection, StoreStatements.upsertDevices(count: chunk.count), chunk.flatMap(Self.binds))
                }
            }
        }
    }

    public func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.insertDeviceIfAbsent, Self.binds(device)).isEmpty
    }

    public func device(namespace: String, deviceID: String) async throws -> DeviceRegistration? {
        try await self.run(on: self.reader, StoreStatements.selectDevice, [.text(namespace), .text(deviceID)])
            .first.map(Self.decodeDevice)
    }

    public func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration] {
        var found: [DeviceRegistration] = []
        for chunk in Array(Set(deviceIDs)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            let binds = [SQLiteData.text(namespace)] + chunk.map { SQLiteData.text($0) }
            found += try await self.run(on: self.reader, StoreStatements.selectDevices(count: chunk.count), binds).map(Self.decodeDevice)
        }
        return found
    }

    public func deleteDevice(namespace: String, deviceID: String) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.deleteDevice, [.text(namespace), .text(deviceID)]).isEmpty
    }

    public func deleteDevices(appID: String, pushToken: String) async throws -> Int {
        let statement = BatchedStatement(sql: StoreStatements.deleteDevicesByToken, binds: [.text(appID), .text(pushToken)])
        return try await self.batchedStatements.submit(statement).count
    }

    public func deviceCount(namespace: String) async throws -> Int {
        try await self.scalar(on: self.reader, StoreStatements.countDevices, [.text(namespace)])
    }
}
