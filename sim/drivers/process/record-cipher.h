// The record layer that seals every byte a keyed TcpTransport connection carries after its hello
// exchange (peer-auth.h): per-direction session keys from HKDF-SHA-256 and records sealed with
// ChaCha20-Poly1305, both from OpenSSL's libcrypto. No I/O here: record-stream.h runs it over a
// socket.
//
// Session keys. After the exchange both ends hold the shared key K, the dialler's and the
// listener's 16-byte nonces Nd and Nl, and both u32 ids. Each direction has its own 32-byte key:
//   key(dialler -> listener) = HKDF-SHA-256(IKM = K, salt = Nd || Nl,
//                                           info = "hilo record dialler to listener" ||
//                                                  dialler id || listener id, 32 bytes)
//   key(listener -> dialler) = the same with info "hilo record listener to dialler" || ...
// (ids u32 little-endian). Both nonces are fresh per connection, so every connection and every
// direction has keys of its own: a record replayed from another connection or reflected back to
// its sender fails its tag.
//
// Records. The sender cuts its outgoing byte stream (the frames of message-frame.h: headers,
// payloads and the real zero padding) into records and sends them back to back:
//   offset  size  field
//   0       4     length L (u32 little-endian): the ciphertext's bytes, 1 <= L <= kMaxRecordBytes
//   4       L     ciphertext: the L plaintext bytes under ChaCha20
//   4 + L   16    Poly1305 tag over the 4 length bytes (associated data) and the ciphertext
// The 96-bit AEAD nonce of a direction's record number s (0, 1, 2, ... counted per connection and
// direction) is 4 zero bytes then s as u64 little-endian; it never travels. The receiver opens
// each record with its own count, so a record whose length, ciphertext or tag was modified, and a
// record injected, replayed, reordered or dropped, fails its tag. The first failure is final: the
// stream cannot be trusted any further (the transport closes the connection) and none of the
// failing record's bytes are given out. A length outside [1, kMaxRecordBytes] is refused on its 4
// bytes, before the body is read. A stream that ends inside a record is truncated (an error); one
// that ends between records ends as any connection does (whoever can cut a connection can cut
// it there), and the frame parser above reports a frame cut short.
#ifndef HILOSIM_DRIVERS_PROCESS_RECORD_CIPHER_H
#define HILOSIM_DRIVERS_PROCESS_RECORD_CIPHER_H

#include "hilo/core/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hilosim
{

/// The two directions' keys of one connection (kKeyBytes each).
struct SessionKeys
{
    std::string dialler_to_listener;
    std::string listener_to_dialler;
};

/// The session keys of the connection between `dialler_id` and `listener_id` whose hello
/// exchanged `dialler_nonce` and `listener_nonce`, under the shared key `key`. Internal when
/// OpenSSL fails.
hilo::StatusOr<SessionKeys> DeriveSessionKeys(std::string_view key, uint32_t dialler_id,
                                              uint32_t listener_id, std::string_view dialler_nonce,
                                              std::string_view listener_nonce);

/// Record sizes (the file comment).
struct RecordFormat
{
    static constexpr size_t kKeyBytes = 32;
    static constexpr size_t kHeaderBytes = 4;
    static constexpr size_t kTagBytes = 16;
    static constexpr size_t kMaxRecordBytes = 64 << 10; // plaintext (= ciphertext) per record
    static constexpr size_t kOverheadBytes = kHeaderBytes + kTagBytes;
};

/// Seals one direction's records, numbering them from 0.
class RecordSealer
{
  public:
    /// REQUIRES: key.size() == RecordFormat::kKeyBytes.
    explicit RecordSealer(std::string_view key);
    ~RecordSealer();
    RecordSealer(const RecordSealer&) = delete;
    RecordSealer& operator=(const RecordSealer&) = delete;

    /// Appends the next record, sealing `plaintext` (1 to kMaxRecordBytes bytes), to `*out`.
    /// InvalidArgument for a size out of range; Internal when OpenSSL fails or the count is
    /// spent.
    hilo::Status Seal(std::string_view plaintext, std::string* out);
    /// Records sealed so far (the next record's number).
    uint64_t records() const { return m_sequence; }

  private:
    struct Context;
    std::unique_ptr<Context> m_ctx;
    uint64_t m_sequence{0};
};

/// Opens the records of one direction, in order, numbering them from 0 as the sealer does.
class RecordOpener
{
  public:
    /// REQUIRES: key.size() == RecordFormat::kKeyBytes.
    explicit RecordOpener(std::string_view key);
    ~RecordOpener();
    RecordOpener(const RecordOpener&) = delete;
    RecordOpener& operator=(const RecordOpener&) = delete;

    /// The bytes that follow the kHeaderBytes of `header`: ciphertext and tag. Corruption for a
    /// length out of range (and then every later call fails).
    hilo::StatusOr<size_t> BodyBytes(std::string_view header);
    /// Opens the next record, given as its header and body (BodyBytes(header) bytes), into
    /// `*plaintext` (replaced). Corruption when it fails its tag or its sizes are wrong; after
    /// any failure every call fails, and `*plaintext` is left empty.
    hilo::Status Open(std::string_view header, std::string_view body, std::string* plaintext);
    /// Records opened so far (the next record's number).
    uint64_t records() const { return m_sequence; }
    /// Ok, or the first failure.
    const hilo::Status& error() const { return m_error; }

  private:
    struct Context;
    std::unique_ptr<Context> m_ctx;
    uint64_t m_sequence{0};
    hilo::Status m_error;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_RECORD_CIPHER_H
