// PeerAuth: the shared-key challenge-response that authenticates the two ends of a TcpTransport
// connection (tcp-transport.h), with HMAC-SHA-256 and the random source of OpenSSL's libcrypto.
//
// Every node of a run holds the same key of at least 32 bytes (hilo-node --key-file, read by
// ReadKeyFile; hilo-emu writes a fresh one per run). The hello exchange, all in frames of the
// transport's hello type, in this order:
//   dialler -> listener  hello      u32 dialler id, 16-byte nonce Nd
//   listener -> dialler  challenge  u32 listener id, 16-byte nonce Nl (no MAC)
//   dialler -> listener  proof      MAC("hilo dialler", dialler id, listener id, Nd, Nl)
//   listener -> dialler  proof      MAC("hilo listener", dialler id, listener id, Nd, Nl)
// where MAC is HMAC-SHA-256 under the key over the label and the fields (u32 little-endian). Each
// side proves it holds the key over a nonce the other chose, so a recorded exchange replays
// nowhere, and neither side sends anything else before the other's proof checked. The listener
// proves itself only after the dialler has: anyone can connect to a listener, and gets a nonce,
// never a MAC to guess the key from offline. A dialler's proof goes only to what it dialled (a
// process that took that address gets one); a random key of at least 32 bytes, as hilo-emu and
// `openssl rand -hex 32` make, leaves nothing to guess from it.
//
// After the exchange both sides derive per-direction session keys from the key, both nonces and
// both ids, and every later byte each way travels in sealed records (record-cipher.h).
#ifndef HILOSIM_DRIVERS_PROCESS_PEER_AUTH_H
#define HILOSIM_DRIVERS_PROCESS_PEER_AUTH_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilosim
{

class PeerAuth
{
  public:
    static constexpr size_t kNonceBytes = 16;
    static constexpr size_t kMacBytes = 32;
    static constexpr size_t kMinKeyBytes = 32;
    static constexpr size_t kHelloBytes = 4 + kNonceBytes;     // dialler's hello
    static constexpr size_t kChallengeBytes = 4 + kNonceBytes; // listener's answer
    static constexpr size_t kProofBytes = kMacBytes;           // either side's proof
    static constexpr size_t kMaxHelloFrameBytes = kProofBytes; // the largest of the three

    /// Which end of the connection a MAC proves.
    enum class Side
    {
        kListener,
        kDialler,
    };

    /// REQUIRES: key.size() >= kMinKeyBytes.
    explicit PeerAuth(std::string key);

    /// kNonceBytes from OpenSSL's random generator; Internal when it fails.
    static hilo::StatusOr<std::string> Nonce();

    /// The MAC that `side` sends for this exchange (kMacBytes).
    std::string Mac(Side side, uint32_t dialler_id, uint32_t listener_id,
                    std::string_view dialler_nonce, std::string_view listener_nonce) const;

    /// True when `mac` is the one `side` must send (compared in constant time).
    bool Check(std::string_view mac, Side side, uint32_t dialler_id, uint32_t listener_id,
               std::string_view dialler_nonce, std::string_view listener_nonce) const;

    /// The key in `path`, as bytes: a file of hex digits (whitespace anywhere ignored; an even
    /// number, at least 2 x kMinKeyBytes) is decoded; any other file is the key as it is, every
    /// byte of it, and must hold at least kMinKeyBytes. InvalidArgument (naming the file) when it
    /// cannot be read, is too short, or can be read by group or others.
    static hilo::StatusOr<std::string> ReadKeyFile(const std::string& path);
    /// The key that a key file's `text` holds (ReadKeyFile's rules); InvalidArgument naming
    /// `path` otherwise.
    static hilo::StatusOr<std::string> ParseKey(const std::string& text, const std::string& path);

    /// Writes a fresh random key (32 bytes as 64 hex digits) to `path`, created with mode 0600;
    /// fails when the file exists.
    static hilo::Status WriteNewKeyFile(const std::string& path);

  private:
    std::string m_key;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_PEER_AUTH_H
