/// The Firebase Cloud Messaging HTTP v1 back end.
public enum FCM {}
