#include "models/fortune-corpus.h"

namespace models
{

std::string
DefaultTextCheckpointPath()
{
    return std::string(HILO_MODELS_DATA_DIR) + "/fortunes-lm.bin";
}

std::vector<std::string>
SplitFortunes(const std::string& file_text)
{
    std::vector<std::string> out;
    std::string record;
    size_t pos = 0;
    while (pos < file_text.size())
    {
        size_t end = file_text.find('\n', pos);
        const bool last = end == std::string::npos;
        const std::string_view line(file_text.data() + pos, (last ? file_text.size() : end) - pos);
        if (line == "%")
        {
            if (!record.empty())
            {
                out.push_back(record);
            }
            record.clear();
        }
        else
        {
            record.append(line);
            record.push_back('\n');
        }
        pos = last ? file_text.size() : end + 1;
    }
    if (!record.empty())
    {
        out.push_back(record);
    }
    return out;
}

at::Tensor
TextWindows(std::string_view text, int64_t count, int64_t len, SeededRng* rng)
{
    at::Tensor out = at::empty({count, len}, at::kLong);
    auto a = out.accessor<int64_t, 2>();
    const uint64_t starts = text.size() - static_cast<uint64_t>(len) + 1;
    for (int64_t i = 0; i < count; ++i)
    {
        const size_t at = static_cast<size_t>(rng->Below(starts));
        for (int64_t j = 0; j < len; ++j)
        {
            a[i][j] = static_cast<unsigned char>(text[at + static_cast<size_t>(j)]);
        }
    }
    return out;
}

} // namespace models
