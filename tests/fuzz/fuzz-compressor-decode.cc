// libFuzzer target: every compressor's Decode on arbitrary payloads for one fixed layout.
// Input: [configuration byte][payload]; the byte picks an entry of CompressorConfigs().
// Invariants: Decode returns ok or kCorruption (never crashes, hangs or reads out of bounds); on
// success it yields exactly numel values, every one finite, and a second instance decoding the same
// bytes into a buffer full of stale values yields the same bits (no dependence on instance state or
// on what the output buffer held).
#include "tests/fuzz/fuzz-fixture.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace
{

struct Decoders
{
    std::vector<std::unique_ptr<hilo::Compressor>> first;
    std::vector<std::unique_ptr<hilo::Compressor>> second;
};

const Decoders&
AllDecoders()
{
    static const Decoders d = []
    {
        Decoders out;
        for (size_t i = 0; i < hilo::fuzz::CompressorConfigs().size(); ++i)
        {
            out.first.push_back(hilo::fuzz::MakeCompressor(i));
            out.second.push_back(hilo::fuzz::MakeCompressor(i));
        }
        return out;
    }();
    return d;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace hilo;
    if (size < 1)
    {
        return 0;
    }
    const Decoders& d = AllDecoders();
    const size_t i = data[0] % d.first.size();
    const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string name = std::string(fuzz::CompressorConfigs()[i].kind) + " (" +
                             fuzz::CompressorConfigs()[i].options + ")";

    std::vector<float> out;
    Status s = d.first[i]->Decode(payload, &out);
    if (!s.ok())
    {
        if (s.code() != StatusCode::kCorruption)
        {
            fuzz::Fail(name + ": Decode returned " + s.ToString() + ", not corruption");
        }
        return 0;
    }
    const size_t numel = static_cast<size_t>(d.first[i]->layout().numel());
    if (out.size() != numel)
    {
        fuzz::Fail(name + ": Decode returned " + std::to_string(out.size()) + " values for " +
                   std::to_string(numel));
    }
    for (size_t v = 0; v < numel; ++v)
    {
        if (!std::isfinite(out[v]))
        {
            fuzz::Fail(name + ": Decode accepted a payload that decodes to a non-finite value at " +
                       std::to_string(v));
        }
    }
    std::vector<float> again(numel + 3, std::numeric_limits<float>::quiet_NaN());
    s = d.second[i]->Decode(payload, &again);
    if (!s.ok())
    {
        fuzz::Fail(name + ": a second decode of the same payload failed: " + s.ToString());
    }
    if (again.size() != numel || std::memcmp(again.data(), out.data(), numel * sizeof(float)) != 0)
    {
        fuzz::Fail(name + ": decoding the same payload twice gave different values");
    }
    return 0;
}
