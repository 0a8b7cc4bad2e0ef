#include "sim/drivers/process/peer-auth.h"

#include "hilo/core/coding.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hilosim
{

PeerAuth::PeerAuth(std::string key)
  : m_key(std::move(key))
{
}

hilo::StatusOr<std::string>
PeerAuth::Nonce()
{
    std::string nonce(kNonceBytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&nonce[0]), static_cast<int>(nonce.size())) !=
        1)
    {
        return hilo::Status::Internal("OpenSSL's random generator failed");
    }
    return nonce;
}

std::string
PeerAuth::Mac(Side side, uint32_t dialler_id, uint32_t listener_id, std::string_view dialler_nonce,
              std::string_view listener_nonce) const
{
    std::string message = side == Side::kListener ? "hilo listener" : "hilo dialler";
    hilo::ByteWriter w(&message);
    w.PutU32(dialler_id);
    w.PutU32(listener_id);
    message.append(dialler_nonce);
    message.append(listener_nonce);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), m_key.data(), static_cast<int>(m_key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &n);
    return std::string(reinterpret_cast<const char*>(out), n);
}

bool
PeerAuth::Check(std::string_view mac, Side side, uint32_t dialler_id, uint32_t listener_id,
                std::string_view dialler_nonce, std::string_view listener_nonce) const
{
    const std::string expected = Mac(side, dialler_id, listener_id, dialler_nonce, listener_nonce);
    return mac.size() == expected.size() &&
           CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) == 0;
}

hilo::StatusOr<std::string>
PeerAuth::ReadKeyFile(const std::string& path)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
    {
        return hilo::Status::InvalidArgument("--key-file " + path + ": " + std::strerror(errno));
    }
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    {
        return hilo::Status::InvalidArgument(
            "--key-file " + path +
            ": readable by group or others; the key must be private to its owner (chmod 600)");
    }
    std::ifstream f(path, std::ios::binary);
    std::ostringstream text;
    text << f.rdbuf();
    if (!f.good() && !f.eof())
    {
        return hilo::Status::InvalidArgument("--key-file " + path + ": cannot be read");
    }
    return ParseKey(text.str(), path);
}

hilo::StatusOr<std::string>
PeerAuth::ParseKey(const std::string& text, const std::string& path)
{
    std::string digits;
    bool hex = true;
    for (char c : text)
    {
        if (std::isxdigit(static_cast<unsigned char>(c)))
        {
            digits += c;
        }
        else if (!std::isspace(static_cast<unsigned char>(c)))
        {
            hex = false;
            break;
        }
    }
    const std::string example = " (for example `openssl rand -hex 32 > " + path + "`)";
    if (hex && !digits.empty())
    {
        if (digits.size() % 2 != 0 || digits.size() < 2 * kMinKeyBytes)
        {
            return hilo::Status::InvalidArgument(
                "--key-file " + path + ": the key has " + std::to_string(digits.size()) +
                " hex digits; an even number of at least " + std::to_string(2 * kMinKeyBytes) +
                " (" + std::to_string(kMinKeyBytes) + " bytes) is needed" + example);
        }
        std::string key;
        for (size_t i = 0; i < digits.size(); i += 2)
        {
            key += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
        }
        return key;
    }
    if (text.size() < kMinKeyBytes)
    {
        return hilo::Status::InvalidArgument(
            "--key-file " + path + ": the key has " + std::to_string(text.size()) +
            " bytes; at least " + std::to_string(kMinKeyBytes) + " raw bytes or " +
            std::to_string(2 * kMinKeyBytes) + " hex digits are needed" + example);
    }
    return text;
}

hilo::Status
PeerAuth::WriteNewKeyFile(const std::string& path)
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
    {
        return hilo::Status::Internal("OpenSSL's random generator failed");
    }
    static const char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char b : raw)
    {
        hex += kHex[b >> 4];
        hex += kHex[b & 15];
    }
    hex += "\n";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
    {
        return hilo::Status::Internal("cannot create the key file " + path + ": " +
                                      std::strerror(errno));
    }
    const ssize_t n = write(fd, hex.data(), hex.size());
    const bool ok = n == static_cast<ssize_t>(hex.size());
    close(fd);
    if (!ok)
    {
        return hilo::Status::Internal("cannot write the key file " + path);
    }
    return hilo::Status::Ok();
}

} // namespace hilosim
