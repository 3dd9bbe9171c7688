import Foundation
import PushgateCore

/// Shortens an APNs body to a byte limit the way Sygnal does: while it is too long, drop the last code
/// point of the longest (in UTF-8 bytes) of `aps.alert` (a string), `aps.alert.body` and each
/// `aps.alert.loc-args` entry. Sizes are measured on the exact bytes Pushgate sends.
enum APNsPayloadTruncation {
    /// The fitted body, or nil when nothing choppable is left and it is still too long.
    static func fit(_ payload: JSONValue, maximumSize: Int) -> JSONValue? {
        guard var size = try? JSONText.encodedCount(payload) else { return nil }
        if size <= maximumSize { return payload }
        guard case .object(var root) = payload, case .object(var aps)? = root["aps"] else { return nil }

        // The choppable strings, as code points, in Sygnal's order of preference on ties.
        enum Slot: Equatable { case alert, body, argument(Int) }
        var slots: [(slot: Slot, scalars: [Unicode.Scalar], bytes: Int)] = []
        var alertObject: [String: JSONValue]?
        var arguments: [JSONValue] = []
        switch aps["alert"] {
        case .string(let text)?: slots.append((.alert, Array(text.unicodeScalars), text.utf8.count))
        case .object(let object)?:
            alertObject = object
            if case .string(let body)? = object["body"] { slots.append((.body, Array(body.unicodeScalars), body.utf8.count)) }
            if case .array(let values)? = object["loc-args"] {
                arguments = values
                for (index, value) in values.enumerated() {
                    if case .string(let text) = value { slots.append((.argument(index), Array(text.unicodeScalars), text.utf8.count)) }
                }
            }
        default: break
        }
        // Simulate the chopping on byte counts; each removed code point shrinks the body by its encoded size.
        var escapedSizes: [Unicode.Scalar: Int] = [:]
        func encodedSize(_ scalar: Unicode.Scalar) -> Int {
            if let known = escapedSizes[scalar] { return known }
            let size = ((try? JSONValue.string(String(scalar)).encoded())?.count ?? 8) - 2
            escapedSizes[scalar] = size
            return size
        }
        while size > maximumSize {
            guard let longest = slots.indices.filter({ slots[$0].bytes > 0 }).max(by: { slots[$0].bytes < slots[$1].bytes }) else {
                return nil
            }
            // max(by:) returns the last of equal maxima; prefer the first, as Sygnal does.
            let first = slots.indices.first { slots[$0].bytes == slots[longest].bytes } ?? longest
            let scalar = slots[first].scalars.removeLast()
            slots[first].bytes -= String(scalar).utf8.count
            size -= encodedSize(scalar)
        }
        for slot in slots {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: slot.scalars)
            let text = String(view)
            switch slot.slot {
            case .alert: aps["alert"] = .string(text)
            case .body: alertObject?["body"] = .string(text)
            case .argument(let index): arguments[index] = .string(text)
            }
        }
        if var alertObject {
            if !arguments.isEmpty { alertObject["loc-args"] = .array(arguments) }
            aps["alert"] = .object(alertObject)
        }
        root["aps"] = .object(aps)
        let fitted = JSONValue.object(root)
        guard let finalSize = (try? fitted.encoded())?.count, finalSize <= maximumSize else { return nil }
        return fitted
    }
}
