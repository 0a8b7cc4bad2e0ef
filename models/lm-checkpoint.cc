#include "models/lm-checkpoint.h"

#include "hilo/core/hash.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace models
{
namespace
{

constexpr char kMagic[8] = {'H', 'I', 'L', 'O', 'L', 'M', 'C', '1'};
constexpr uint8_t kTypeTensor = 1;
constexpr uint8_t kTypeBytes = 2;
constexpr uint64_t kMaxTensorValues = 1ull << 28;
constexpr uint64_t kMaxBlobBytes = 1ull << 30;

template<typename T>
void
Put(std::string* out, T v)
{
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out->append(b, sizeof(T));
}

bool
ValidName(std::string_view name)
{
    if (name.empty() || name.size() > 255)
    {
        return false;
    }
    for (char c : name)
    {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok)
        {
            return false;
        }
    }
    return true;
}

/// Bounds-checked little-endian reader.
class Reader
{
  public:
    explicit Reader(std::string_view bytes)
      : m_bytes(bytes)
    {
    }
    template<typename T>
    bool Get(T* v)
    {
        if (m_bytes.size() - m_pos < sizeof(T))
        {
            return false;
        }
        std::memcpy(v, m_bytes.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return true;
    }
    bool Take(uint64_t n, std::string_view* out)
    {
        if (m_bytes.size() - m_pos < n)
        {
            return false;
        }
        *out = m_bytes.substr(m_pos, n);
        m_pos += n;
        return true;
    }
    size_t left() const { return m_bytes.size() - m_pos; }

  private:
    std::string_view m_bytes;
    size_t m_pos{0};
};

} // namespace

std::string
LmCheckpoint::Serialize() const
{
    std::string out(kMagic, sizeof(kMagic));
    Put<uint32_t>(&out, static_cast<uint32_t>(tensors.size() + blobs.size()));
    for (const auto& [name, t] : tensors)
    {
        const at::Tensor c = t.detach().to(at::kFloat).contiguous();
        Put<uint8_t>(&out, kTypeTensor);
        Put<uint16_t>(&out, static_cast<uint16_t>(name.size()));
        out += name;
        Put<uint8_t>(&out, static_cast<uint8_t>(c.dim()));
        for (int64_t s : c.sizes())
        {
            Put<uint32_t>(&out, static_cast<uint32_t>(s));
        }
        out.append(reinterpret_cast<const char*>(c.data_ptr<float>()),
                   static_cast<size_t>(c.numel()) * sizeof(float));
    }
    for (const auto& [name, b] : blobs)
    {
        Put<uint8_t>(&out, kTypeBytes);
        Put<uint16_t>(&out, static_cast<uint16_t>(name.size()));
        out += name;
        Put<uint64_t>(&out, static_cast<uint64_t>(b.size()));
        out += b;
    }
    Put<uint64_t>(&out, hilo::HashBytes(out.data(), out.size()));
    return out;
}

hilo::StatusOr<LmCheckpoint>
LmCheckpoint::Parse(std::string_view bytes)
{
    auto bad = [](const std::string& what)
    { return hilo::Status::Corruption("checkpoint: " + what); };
    if (bytes.size() < sizeof(kMagic) + 4 + 8 ||
        std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    {
        return bad("not a hilo-lmckpt-v1 file (magic)");
    }
    uint64_t digest = 0;
    std::memcpy(&digest, bytes.data() + bytes.size() - 8, 8);
    if (hilo::HashBytes(bytes.data(), bytes.size() - 8) != digest)
    {
        return bad("digest mismatch (truncated or modified file)");
    }
    Reader r(bytes.substr(sizeof(kMagic), bytes.size() - sizeof(kMagic) - 8));
    uint32_t entries = 0;
    r.Get(&entries);
    LmCheckpoint c;
    for (uint32_t e = 0; e < entries; ++e)
    {
        const std::string where = "entry " + std::to_string(e);
        uint8_t type = 0;
        uint16_t name_len = 0;
        std::string_view name;
        if (!r.Get(&type) || !r.Get(&name_len) || !r.Take(name_len, &name))
        {
            return bad(where + ": truncated header");
        }
        if (!ValidName(name))
        {
            return bad(where + ": invalid name");
        }
        const std::string key(name);
        if (c.tensors.count(key) || c.blobs.count(key))
        {
            return bad(where + " '" + key + "': duplicate name");
        }
        if (type == kTypeTensor)
        {
            uint8_t ndim = 0;
            if (!r.Get(&ndim) || ndim < 1 || ndim > 4)
            {
                return bad(where + " '" + key + "': ndim must be 1..4");
            }
            std::vector<int64_t> dims;
            uint64_t count = 1;
            for (uint8_t d = 0; d < ndim; ++d)
            {
                uint32_t s = 0;
                if (!r.Get(&s) || s < 1)
                {
                    return bad(where + " '" + key + "': bad dimension");
                }
                count *= s;
                if (count > kMaxTensorValues)
                {
                    return bad(where + " '" + key + "': tensor too large");
                }
                dims.push_back(s);
            }
            std::string_view data;
            if (!r.Take(count * sizeof(float), &data))
            {
                return bad(where + " '" + key + "': truncated values");
            }
            at::Tensor t = at::empty(dims, at::kFloat);
            std::memcpy(t.data_ptr<float>(), data.data(), data.size());
            if (!at::isfinite(t).all().item<bool>())
            {
                return bad(where + " '" + key + "': non-finite values");
            }
            c.tensors[key] = t;
        }
        else if (type == kTypeBytes)
        {
            uint64_t len = 0;
            std::string_view data;
            if (!r.Get(&len) || len > kMaxBlobBytes || !r.Take(len, &data))
            {
                return bad(where + " '" + key + "': truncated bytes");
            }
            c.blobs[key] = std::string(data);
        }
        else
        {
            return bad(where + " '" + key + "': unknown type " + std::to_string(type));
        }
    }
    if (r.left() != 0)
    {
        return bad(std::to_string(r.left()) + " trailing bytes");
    }
    return c;
}

hilo::StatusOr<LmCheckpoint>
LmCheckpoint::Read(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
    {
        return hilo::Status::InvalidArgument("cannot read checkpoint " + path);
    }
    std::ostringstream s;
    s << f.rdbuf();
    auto c = Parse(s.str());
    if (!c.ok())
    {
        return hilo::Status(c.status().code(), path + ": " + c.status().message());
    }
    return c;
}

std::map<std::string, at::Tensor>
LmCheckpoint::WithPrefix(const std::string& prefix) const
{
    std::map<std::string, at::Tensor> out;
    for (const auto& [name, t] : tensors)
    {
        if (name.compare(0, prefix.size(), prefix) == 0)
        {
            out[name.substr(prefix.size())] = t;
        }
    }
    return out;
}

} // namespace models
