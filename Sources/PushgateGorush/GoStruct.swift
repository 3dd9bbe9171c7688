import PushgateCore

/// A Go struct as `encoding/json` reads a JSON object into it and writes it back, for gorush's view of a
/// caller's FCM sections (``GorushFCMSections``): declared fields matched by name (exactly, else ignoring
/// case), values of the wrong JSON type refused, empty values left out unless the struct writes its zero
/// values, and members it does not declare dropped unless it keeps them (a custom-data map).
struct GoStruct: Sendable {
    /// The declared fields by JSON name.
    let fields: [String: GoField]
    /// Whether zero values are written (fields without `omitempty`).
    let keepsZeros: Bool
    /// Whether members not declared (and declared ones left at their zero value) are kept as given, as
    /// firebase-admin-go's structs with custom data keep them.
    let keepsOthers: Bool
    /// A field always written, null when not given.
    let alwaysWritten: String?

    init(_ fields: [String: GoField], keepsZeros: Bool = false, keepsOthers: Bool = false, alwaysWritten: String? = nil) {
        self.fields = fields
        self.keepsZeros = keepsZeros
        self.keepsOthers = keepsOthers
        self.alwaysWritten = alwaysWritten
    }

    /// The object as the struct writes it back.
    /// - Throws: ``GorushRequestReader/Unreadable`` for a member of the wrong type (`path` names it).
    func read(_ members: [String: JSONValue], path: String) throws(GorushRequestReader.Unreadable) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        if self.keepsOthers {
            for (key, value) in members {
                guard let field = self.fields[key] else {
                    result[key] = value
                    continue
                }
                result[key] = try field.read(value, path: path + key) ?? value
            }
        } else {
            for (name, field) in self.fields {
                let given = members[name] ?? members.first(where: { $0.key.lowercased() == name.lowercased() })?.value
                if let given, let value = try field.read(given, path: path + name) {
                    result[name] = value
                } else if self.keepsZeros {
                    if case .duration(required: true) = field {
                        throw GorushRequestReader.Unreadable(reason: "\(path)\(name) is not a duration")
                    }
                    result[name] = field.zero
                }
            }
        }
        if let always = self.alwaysWritten, result[always] == nil { result[always] = .null }
        return result
    }
}

/// How one field of a ``GoStruct`` reads its JSON value.
indirect enum GoField: Sendable {
    /// `string`.
    case string
    /// `bool`.
    case bool
    /// `int`.
    case int
    /// `*int` or `*int64`: written when given, zero included.
    case intPointer
    /// An `int` written back as 1 when it was 1 and left out otherwise (`CriticalSound.critical`).
    case flag
    /// `float64`.
    case float
    /// `[]string`.
    case strings
    /// `[]int`.
    case ints
    /// `map[string]string`.
    case stringMap
    /// `interface{}`: anything, as given.
    case any
    /// A duration in firebase-admin-go's text form (``GoDuration``); `required` when an empty one cannot
    /// be read (the light settings' durations) rather than left out (`android.ttl`).
    case duration(required: Bool)
    /// A list of durations written back in whole milliseconds (`AndroidNotification.vibrate_timings`).
    case millisecondDurations
    /// A string that must be one of these (an enumeration firebase-admin-go maps to its constants).
    case oneOf(Set<String>)
    /// A pointer to a struct: written when given, even empty.
    case object(GoStruct)
    /// A list of pointers to structs.
    case objects(GoStruct)
    /// A struct, or else a string (`Aps.alert`, `Aps.sound`).
    case objectOrString(GoStruct)

    /// The zero value's result, left out (spelt out: `nil` beside a `JSONValue` in a conditional would be
    /// read as JSON's `null`, since `JSONValue` takes the nil literal).
    private static let omitted: JSONValue? = .none

    /// What the field writes when it has its zero value and is written anyway (no `omitempty`).
    var zero: JSONValue {
        switch self {
        case .string, .oneOf: ""
        case .bool: false
        case .int, .flag, .float: 0
        default: .null
        }
    }

    /// The value as the field writes it back; nil for the zero value (left out under `omitempty`).
    /// - Throws: ``GorushRequestReader/Unreadable`` when Go's decoder refuses it.
    func read(_ value: JSONValue, path: String) throws(GorushRequestReader.Unreadable) -> JSONValue? {
        if case .null = value { return Self.omitted }
        func refused(_ expected: String) -> GorushRequestReader.Unreadable {
            GorushRequestReader.Unreadable(reason: "\(path) is not \(expected)")
        }
        switch (self, value) {
        case (.string, .string(let text)): return text.isEmpty ? Self.omitted : value
        case (.bool, .bool(let flag)): return flag ? value : Self.omitted
        case (.int, .number(let number)), (.intPointer, .number(let number)), (.flag, .number(let number)):
            guard number.rounded() == number, abs(number) < 9.2e18 else { throw refused("an integer") }
            switch self {
            case .intPointer: return value
            case .flag: return number == 1 ? value : Self.omitted
            default: return number == 0 ? Self.omitted : value
            }
        case (.float, .number(let number)): return number == 0 ? Self.omitted : value
        case (.strings, .array(let items)):
            var texts: [JSONValue] = []
            for item in items {
                switch item {
                case .string: texts.append(item)
                case .null: texts.append(.string(""))
                default: throw refused("a list of strings")
                }
            }
            return texts.isEmpty ? Self.omitted : .array(texts)
        case (.ints, .array(let items)):
            var numbers: [JSONValue] = []
            for item in items {
                switch item {
                case .number(let number) where number.rounded() == number: numbers.append(item)
                case .null: numbers.append(0)
                default: throw refused("a list of integers")
                }
            }
            return numbers.isEmpty ? Self.omitted : .array(numbers)
        case (.stringMap, .object(let members)):
            var texts: [String: JSONValue] = [:]
            for (key, item) in members {
                switch item {
                case .string: texts[key] = item
                case .null: texts[key] = ""
                default: throw refused("an object of strings")
                }
            }
            return texts.isEmpty ? Self.omitted : .object(texts)
        case (.any, _): return value
        case (.duration, .string(let text)):
            if text.isEmpty { return Self.omitted }
            guard let nanoseconds = GoDuration.parse(text) else { throw refused("a duration") }
            return .string(GoDuration.text(nanoseconds))
        case (.millisecondDurations, .array(let items)):
            var texts: [JSONValue] = []
            for item in items {
                guard case .string(let text) = item, let nanoseconds = GoDuration.parse(text) else { throw refused("a list of durations") }
                texts.append(.string(GoDuration.text(nanoseconds / 1_000_000 &* 1_000_000)))
            }
            return texts.isEmpty ? Self.omitted : .array(texts)
        case (.oneOf(let allowed), .string(let text)):
            if text.isEmpty { return Self.omitted }
            guard allowed.contains(text) else { throw refused("one of \(allowed.sorted().joined(separator: ", "))") }
            return value
        case (.object(let shape), .object(let members)), (.objectOrString(let shape), .object(let members)):
            return .object(try shape.read(members, path: path + "."))
        case (.objects(let shape), .array(let items)):
            var objects: [JSONValue] = []
            for (index, item) in items.enumerated() {
                switch item {
                case .object(let members): objects.append(.object(try shape.read(members, path: "\(path)[\(index)].")))
                case .null: objects.append(.null)
                default: throw refused("a list of objects")
                }
            }
            return objects.isEmpty ? Self.omitted : .array(objects)
        case (.objectOrString, .string(let text)): return text.isEmpty ? Self.omitted : value
        default:
            throw refused("of the type gorush declares")
        }
    }
}
