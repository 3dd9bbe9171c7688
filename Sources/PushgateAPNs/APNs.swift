/// The Apple Push Notification service back end (HTTP/2, token or certificate authentication).
public enum APNs {}
