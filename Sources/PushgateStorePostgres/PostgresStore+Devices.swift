import Foundation
import PostgresNIO
import PushgateCore
public import PushgateStore

// Device registrations in PostgreSQL.
extension PostgresStore {
    public func saveDevice(_ device: DeviceRegistration) async throws {
        _ = try await self.rows(StoreStatements.upsertDevice, Self.binds(device))
    }

    public func saveDevices(_ devices: [DeviceRegistration]) async throws {
        let unique = devices.keepingLastPerDevice()
        guard !unique.isEmpty else { return }
        try await self.client.withTransaction(logger: self.logger) { connection in
            for chunk in unique.chunked(by: StoreStatements.upsertDevicesChunkSize) {
                var binds = PostgresBindings(capacity: chunk.count * 8)
                for device in chunk { Self.append(device, to: &binds) }
                _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.upsertDevices(count: chunk.count), binds: binds), logger: self.logger)
            }
        }
    }

    public func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool {
        try await !self.rows(StoreStatements.insertDeviceIfAbsent, Self.binds(device)).decode(String.self).all().isEmpty
    }

    public func device(namespace: String, deviceID: String) async throws -> DeviceRegistration? {
        let rows = try await self.rows(StoreStatements.selectDevice, Self.binds(namespace, deviceID))
            .decode((String, String, String, String, String?, String, Int64, Int64).self).all()
        return try rows.first.map(Self.decodeDevice)
    }

    static func decodeDevice(_ row: (String, String, String, String, String?, String, Int64, Int64)) throws -> DeviceRegistration {
        DeviceRegistration(
            namespace: row.0, deviceID: row.1, appID: row.2, pushToken: row.3, publicKey: row.4,
            attributes: try DeviceAttributesCoding.decode(row.5),
            createdAt: Date(millisecondsSince1970: row.6), updatedAt: Date(millisecondsSince1970: row.7)
        )
    }

    public func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration] {
        var found: [DeviceRegistration] = []
        for chunk in Array(Set(deviceIDs)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            var binds = PostgresBindings(capacity: chunk.count + 1)
            binds.append(namespace)
            for id in chunk { binds.append(id) }
            found += try await self.rows(StoreStatements.selectDevices(count: chunk.count), binds)
                .decode((String, String, String, String, String?, String, Int64, Int64).self).all()
                .map(Self.decodeDevice)
        }
        return found
    }

    public func deleteDevice(namespace: String, deviceID: String) async throws -> Bool {
        try await !self.rows(StoreStatements.deleteDevice, Self.binds(namespace, deviceID)).decode(String.self).all().isEmpty
    }

    public func deleteDevices(appID: String, pushToken: String) async throws -> Int {
        try await self.rows(StoreStatements.deleteDevicesByToken, Self.binds(appID, pushToken)).decode(String.self).all().count
    }

    public func deviceCount(namespace: String) async throws -> Int {
        try await self.scalar(StoreStatements.countDevices, Self.binds(namespace))
    }
}
