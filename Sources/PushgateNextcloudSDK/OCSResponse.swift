import Foundation

/// Reads the OCS JSON envelope `{"ocs":{"meta":{…},"data":…}}` of `?format=json` answers.
enum OCSResponse {
    /// The `data` object of `body`, or `nil` if there is none.
    static func data(_ body: Data) -> [String: Any]? {
        guard let root = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let ocs = root["ocs"] as? [String: Any]
        else {
            return nil
        }
        return ocs["data"] as? [String: Any]
    }

    /// The error message of a failed request: `data.message` (push endpoints), else a non-empty
    /// `meta.message`.
    static func errorMessage(_ body: Data) -> String? {
        guard let root = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let ocs = root["ocs"] as? [String: Any]
        else {
            return nil
        }
        if let data = ocs["data"] as? [String: Any], let message = data["message"] as? String, !message.isEmpty {
            return message
        }
        if let meta = ocs["meta"] as? [String: Any], let message = meta["message"] as? String, !message.isEmpty {
            return message
        }
        return nil
    }
}
