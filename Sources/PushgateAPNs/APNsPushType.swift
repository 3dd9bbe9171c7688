/// The values of the `apns-push-type` header that the `push_type` setting may name.
public enum APNsPushType: String, Sendable, Hashable, CaseIterable {
    case alert
    case background
    case voip
    case complication
    case fileprovider
    case mdm
    case location
    case liveactivity
    case pushtotalk
    case widgets
    case controls
}
