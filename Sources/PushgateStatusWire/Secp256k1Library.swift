#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushgateCore

/// libsecp256k1, loaded at run time (so the gateway builds and runs without it where Status is not
/// configured): the entry points Status needs, resolved once, and one shared context.
///
/// A context is safe to share between threads for every call used here (none modifies it after it is
/// randomized at creation).
final class Secp256k1Library: @unchecked Sendable {
    typealias ContextCreate = @convention(c) (UInt32) -> OpaquePointer?
    typealias ContextRandomize = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?) -> Int32
    typealias SeckeyVerify = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?) -> Int32
    typealias PubkeyCreate = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?) -> Int32
    typealias PubkeyParse = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, Int) -> Int32
    typealias PubkeySerialize = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, UInt32) -> Int32
    typealias ECDHHash = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafeMutableRawPointer?) -> Int32
    typealias ECDH = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, ECDHHash?, UnsafeMutableRawPointer?) -> Int32
    typealias SignRecoverable = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, OpaquePointer?, UnsafeRawPointer?) -> Int32
    typealias SerializeCompact = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?) -> Int32
    typealias ParseCompact = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, Int32) -> Int32
    typealias Recover = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) -> Int32

    /// `SECP256K1_CONTEXT_SIGN | SECP256K1_CONTEXT_VERIFY`.
    static let contextFlags: UInt32 = 0x0301
    /// `SECP256K1_EC_COMPRESSED` and `SECP256K1_EC_UNCOMPRESSED`.
    static let compressed: UInt32 = 0x0102
    static let uncompressed: UInt32 = 0x0002

    let context: OpaquePointer
    let seckeyVerify: SeckeyVerify
    let pubkeyCreate: PubkeyCreate
    let pubkeyParse: PubkeyParse
    let pubkeySerialize: PubkeySerialize
    let ecdh: ECDH
    let signRecoverable: SignRecoverable
    let serializeCompact: SerializeCompact
    let parseCompact: ParseCompact
    let recover: Recover

    /// The library, or why it cannot be used.
    static let shared: Result<Secp256k1Library, Secp256k1.Unavailable> = Secp256k1Library.load()

    private init(
        context: OpaquePointer, seckeyVerify: SeckeyVerify, pubkeyCreate: PubkeyCreate, pubkeyParse: PubkeyParse, pubkeySerialize: PubkeySerialize,
        ecdh: ECDH, signRecoverable: SignRecoverable, serializeCompact: SerializeCompact, parseCompact: ParseCompact, recover: Recover
    ) {
        self.context = context
        self.seckeyVerify = seckeyVerify
        self.pubkeyCreate = pubkeyCreate
        self.pubkeyParse = pubkeyParse
        self.pubkeySerialize = pubkeySerialize
        self.ecdh = ecdh
        self.signRecoverable = signRecoverable
        self.serializeCompact = serializeCompact
        self.parseCompact = parseCompact
        self.recover = recover
    }

    private static func load() -> Result<Secp256k1Library, Secp256k1.Unavailable> {
        // Debian's libsecp256k1-1 ships .so.1 (0.2) and newer releases .so.2; the unversioned names are for
        // development installs and macOS.
        let names = ["libsecp256k1.so.1", "libsecp256k1.so.2", "libsecp256k1.so.0", "libsecp256k1.so", "libsecp256k1.dylib"]
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            return .failure(Secp256k1.Unavailable(missing: "the library (libsecp256k1.so.1, .so.2, .so.0 or .so)"))
        }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let pointer = dlsym(handle, name) else { return nil }
            return unsafeBitCast(pointer, to: type)
        }
        guard let create = symbol("secp256k1_context_create", as: ContextCreate.self),
            let randomize = symbol("secp256k1_context_randomize", as: ContextRandomize.self),
            let seckeyVerify = symbol("secp256k1_ec_seckey_verify", as: SeckeyVerify.self),
            let pubkeyCreate = symbol("secp256k1_ec_pubkey_create", as: PubkeyCreate.self),
            let pubkeyParse = symbol("secp256k1_ec_pubkey_parse", as: PubkeyParse.self),
            let pubkeySerialize = symbol("secp256k1_ec_pubkey_serialize", as: PubkeySerialize.self)
        else { return .failure(Secp256k1.Unavailable(missing: "the base functions")) }
        guard let ecdh = symbol("secp256k1_ecdh", as: ECDH.self) else { return .failure(Secp256k1.Unavailable(missing: "the ECDH module")) }
        guard let sign = symbol("secp256k1_ecdsa_sign_recoverable", as: SignRecoverable.self),
            let serializeCompact = symbol("secp256k1_ecdsa_recoverable_signature_serialize_compact", as: SerializeCompact.self),
            let parseCompact = symbol("secp256k1_ecdsa_recoverable_signature_parse_compact", as: ParseCompact.self),
            let recover = symbol("secp256k1_ecdsa_recover", as: Recover.self)
        else { return .failure(Secp256k1.Unavailable(missing: "the recovery module")) }
        guard let context = create(Self.contextFlags) else { return .failure(Secp256k1.Unavailable(missing: "a context (secp256k1_context_create failed)")) }
        // Blinding against side channels; a failure leaves the context usable, only unblinded.
        _ = randomize(context, SecureRandomPool.shared.bytes(32))
        return .success(
            Secp256k1Library(
                context: context, seckeyVerify: seckeyVerify, pubkeyCreate: pubkeyCreate, pubkeyParse: pubkeyParse,
                pubkeySerialize: pubkeySerialize, ecdh: ecdh, signRecoverable: sign, serializeCompact: serializeCompact,
                parseCompact: parseCompact, recover: recover
            )
        )
    }
}
