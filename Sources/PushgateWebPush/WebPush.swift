/// The Web Push back end (RFC 8030, 8291, 8292).
public enum WebPush {}
