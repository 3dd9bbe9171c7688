import HTTPTypes
import PushgateHTTP
import Testing

/// `HTTPFields.value(of:)` answers as the subscript does: absent, once, repeated (joined), any case.
@Suite("HTTP field values")
struct HTTPFieldsValueTests {
    @Test func answersAsTheSubscriptDoes() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentType, value: "application/json"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Twice")), value: "a"))
        fields.append(HTTPField(name: .contentLength, value: "12"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("x-twice")), value: "b"))
        fields.append(HTTPField(name: .cookie, value: "c=1"))
        fields.append(HTTPField(name: .cookie, value: "d=2"))
        let names: [HTTPField.Name] = [.contentType, .contentLength, .authorization, try #require(HTTPField.Name("X-TWICE")), .cookie]
        for name in names {
            #expect(fields.value(of: name) == fields[name], "\(name)")
        }
        #expect(fields.value(of: .contentLength) == "12")
        #expect(fields.value(of: .authorization) == nil)
        #expect(fields.value(of: try #require(HTTPField.Name("x-twice"))) == "a, b")
        #expect(fields.value(of: .cookie) == "c=1; d=2")
    }
}
