extension ConfigurationError {
    /// How a file-path setting is shown in an error: the path itself when it looks like one, otherwise a
    /// placeholder, so that key material pasted where a path belongs (a PEM block, a JSON service account)
    /// is never printed.
    /// - Parameter value: the setting's value.
    /// - Returns: text safe to print.
    public static func shownPath(_ value: String) -> String {
        let looksLikeKeyMaterial =
            value.contains("\n") || value.contains("-----") || value.contains("PRIVATE KEY") || value.contains("{")
            || value.count > 512
        return looksLikeKeyMaterial ? "(the value is not a file path: it looks like inline key material; give the path of a file)" : value
    }
}
