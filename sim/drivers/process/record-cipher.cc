#include "sim/drivers/process/record-cipher.h"

#include "hilo/core/coding.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>
#include <limits>

namespace hilosim
{

namespace
{

constexpr size_t kNonceBytes = 12;

const unsigned char*
Bytes(std::string_view s)
{
    return reinterpret_cast<const unsigned char*>(s.data());
}

unsigned char*
Bytes(std::string* s, size_t at)
{
    return reinterpret_cast<unsigned char*>(&(*s)[at]);
}

// 4 zero bytes, then the record number as u64 little-endian.
void
NonceOf(uint64_t sequence, unsigned char nonce[kNonceBytes])
{
    std::memset(nonce, 0, kNonceBytes);
    for (int i = 0; i < 8; ++i)
    {
        nonce[4 + i] = static_cast<unsigned char>(sequence >> (8 * i));
    }
}

hilo::StatusOr<std::string>
Hkdf(std::string_view key, std::string_view salt, std::string_view info)
{
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* ctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
    EVP_KDF_free(kdf);
    if (!ctx)
    {
        return hilo::Status::Internal("OpenSSL has no HKDF");
    }
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(key.data()),
                                          key.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                          salt.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()),
                                          info.size()),
        OSSL_PARAM_construct_end(),
    };
    std::string out(RecordFormat::kKeyBytes, '\0');
    const int ok = EVP_KDF_derive(ctx, Bytes(&out, 0), out.size(), params);
    EVP_KDF_CTX_free(ctx);
    if (ok != 1)
    {
        return hilo::Status::Internal("OpenSSL's HKDF failed");
    }
    return out;
}

} // namespace

hilo::StatusOr<SessionKeys>
DeriveSessionKeys(std::string_view key, uint32_t dialler_id, uint32_t listener_id,
                  std::string_view dialler_nonce, std::string_view listener_nonce)
{
    std::string salt(dialler_nonce);
    salt.append(listener_nonce);
    std::string ids;
    hilo::ByteWriter w(&ids);
    w.PutU32(dialler_id);
    w.PutU32(listener_id);
    auto to_listener = Hkdf(key, salt, "hilo record dialler to listener" + ids);
    auto to_dialler = Hkdf(key, salt, "hilo record listener to dialler" + ids);
    if (!to_listener.ok())
    {
        return to_listener.status();
    }
    if (!to_dialler.ok())
    {
        return to_dialler.status();
    }
    return SessionKeys{std::move(*to_listener), std::move(*to_dialler)};
}

// One EVP context per direction, keyed once; each record sets only its nonce.
struct RecordSealer::Context
{
    EVP_CIPHER_CTX* ctx{nullptr};
    bool ok{false};
    ~Context() { EVP_CIPHER_CTX_free(ctx); }
};

struct RecordOpener::Context
{
    EVP_CIPHER_CTX* ctx{nullptr};
    bool ok{false};
    ~Context() { EVP_CIPHER_CTX_free(ctx); }
};

RecordSealer::RecordSealer(std::string_view key)
  : m_ctx(std::make_unique<Context>())
{
    m_ctx->ctx = EVP_CIPHER_CTX_new();
    m_ctx->ok =
        m_ctx->ctx && key.size() == RecordFormat::kKeyBytes &&
        EVP_EncryptInit_ex(m_ctx->ctx, EVP_chacha20_poly1305(), nullptr, Bytes(key), nullptr) == 1;
}

RecordSealer::~RecordSealer() = default;

hilo::Status
RecordSealer::Seal(std::string_view plaintext, std::string* out)
{
    if (plaintext.empty() || plaintext.size() > RecordFormat::kMaxRecordBytes)
    {
        return hilo::Status::InvalidArgument("a record holds 1 to " +
                                             std::to_string(RecordFormat::kMaxRecordBytes) +
                                             " bytes, not " + std::to_string(plaintext.size()));
    }
    if (!m_ctx->ok || m_sequence == std::numeric_limits<uint64_t>::max())
    {
        return hilo::Status::Internal("the record sealer is unusable (OpenSSL failed, or its "
                                      "2^64 - 1 records are spent)");
    }
    const size_t at = out->size();
    hilo::ByteWriter(out).PutU32(static_cast<uint32_t>(plaintext.size()));
    out->resize(at + RecordFormat::kHeaderBytes + plaintext.size() + RecordFormat::kTagBytes);
    unsigned char nonce[kNonceBytes];
    NonceOf(m_sequence, nonce);
    unsigned char* header = Bytes(out, at);
    unsigned char* body = header + RecordFormat::kHeaderBytes;
    int n = 0;
    int tail = 0;
    const bool ok =
        EVP_EncryptInit_ex(m_ctx->ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
        EVP_EncryptUpdate(m_ctx->ctx, nullptr, &n, header, RecordFormat::kHeaderBytes) == 1 &&
        EVP_EncryptUpdate(m_ctx->ctx, body, &n, Bytes(plaintext),
                          static_cast<int>(plaintext.size())) == 1 &&
        EVP_EncryptFinal_ex(m_ctx->ctx, body + n, &tail) == 1 &&
        static_cast<size_t>(n + tail) == plaintext.size() &&
        EVP_CIPHER_CTX_ctrl(m_ctx->ctx, EVP_CTRL_AEAD_GET_TAG, RecordFormat::kTagBytes,
                            body + plaintext.size()) == 1;
    if (!ok)
    {
        out->resize(at);
        m_ctx->ok = false;
        return hilo::Status::Internal("OpenSSL failed to seal a record");
    }
    ++m_sequence;
    return hilo::Status::Ok();
}

RecordOpener::RecordOpener(std::string_view key)
  : m_ctx(std::make_unique<Context>())
{
    m_ctx->ctx = EVP_CIPHER_CTX_new();
    m_ctx->ok =
        m_ctx->ctx && key.size() == RecordFormat::kKeyBytes &&
        EVP_DecryptInit_ex(m_ctx->ctx, EVP_chacha20_poly1305(), nullptr, Bytes(key), nullptr) == 1;
    if (!m_ctx->ok)
    {
        m_error = hilo::Status::Internal("OpenSSL failed to set up the record opener");
    }
}

RecordOpener::~RecordOpener() = default;

hilo::StatusOr<size_t>
RecordOpener::BodyBytes(std::string_view header)
{
    if (!m_error.ok())
    {
        return m_error;
    }
    uint32_t length = 0;
    hilo::ByteReader r(header);
    if (header.size() != RecordFormat::kHeaderBytes || !r.GetU32(&length) || length == 0 ||
        length > RecordFormat::kMaxRecordBytes)
    {
        m_error = hilo::Status::Corruption("record " + std::to_string(m_sequence) + " announces " +
                                           std::to_string(length) + " bytes (a record holds 1 to " +
                                           std::to_string(RecordFormat::kMaxRecordBytes) + ")");
        return m_error;
    }
    return size_t{length} + RecordFormat::kTagBytes;
}

hilo::Status
RecordOpener::Open(std::string_view header, std::string_view body, std::string* plaintext)
{
    plaintext->clear();
    auto body_bytes = BodyBytes(header);
    if (!body_bytes.ok())
    {
        return body_bytes.status();
    }
    if (body.size() != *body_bytes)
    {
        m_error = hilo::Status::Corruption("record " + std::to_string(m_sequence) + " has " +
                                           std::to_string(body.size()) +
                                           " bytes after its "
                                           "length, not " +
                                           std::to_string(*body_bytes));
        return m_error;
    }
    const size_t length = body.size() - RecordFormat::kTagBytes;
    plaintext->resize(length);
    unsigned char nonce[kNonceBytes];
    NonceOf(m_sequence, nonce);
    // OpenSSL takes the expected tag through a non-const pointer; it only reads it.
    unsigned char tag[RecordFormat::kTagBytes];
    std::memcpy(tag, body.data() + length, RecordFormat::kTagBytes);
    int n = 0;
    int tail = 0;
    const bool ok =
        EVP_DecryptInit_ex(m_ctx->ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
        EVP_DecryptUpdate(m_ctx->ctx, nullptr, &n, Bytes(header), RecordFormat::kHeaderBytes) ==
            1 &&
        EVP_DecryptUpdate(m_ctx->ctx, Bytes(plaintext, 0), &n, Bytes(body),
                          static_cast<int>(length)) == 1 &&
        EVP_CIPHER_CTX_ctrl(m_ctx->ctx, EVP_CTRL_AEAD_SET_TAG, RecordFormat::kTagBytes, tag) == 1 &&
        EVP_DecryptFinal_ex(m_ctx->ctx, Bytes(plaintext, 0) + n, &tail) == 1 &&
        static_cast<size_t>(n + tail) == length;
    if (!ok)
    {
        plaintext->clear();
        m_error = hilo::Status::Corruption(
            "record " + std::to_string(m_sequence) +
            " fails its authentication tag (modified, injected, replayed, reordered or sealed "
            "under another key)");
        return m_error;
    }
    ++m_sequence;
    return hilo::Status::Ok();
}

} // namespace hilosim
