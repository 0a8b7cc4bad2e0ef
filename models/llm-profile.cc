#include "models/llm-profile.h"

#include "models/csv-table.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace models
{
namespace
{

constexpr const char* kLlmsCsv =
#include "models/data/llms-csv.inc"
    ;

struct Loaded
{
    hilo::Status status;
    std::vector<LlmProfile> llms;
};

Loaded
Load()
{
    Loaded out;
    hilo::StatusOr<CsvTable> t = CsvTable::Parse(kLlmsCsv, "models/data/llms.csv");
    if (!t.ok())
    {
        out.status = t.status();
        return out;
    }
    for (size_t r = 0; r < t->rows(); ++r)
    {
        LlmProfile p;
        hilo::StatusOr<std::string> name = t->Text(r, "name");
        if (!name.ok())
        {
            out.status = name.status();
            return out;
        }
        p.name = *name;
        std::vector<std::pair<const char*, int64_t*>> ints{
            {"layers", &p.layers}, {"hidden", &p.hidden},     {"intermediate", &p.intermediate},
            {"heads", &p.heads},   {"kv_heads", &p.kv_heads}, {"head_dim", &p.head_dim},
            {"vocab", &p.vocab}};
        for (auto& [column, field] : ints)
        {
            hilo::StatusOr<double> v = t->Number(r, column);
            if (!v.ok() || *v < 1 || std::floor(*v) != *v)
            {
                out.status =
                    v.ok()
                        ? hilo::Status::InvalidArgument("models/data/llms.csv: " + p.name + ": " +
                                                        column + " must be a positive integer")
                        : v.status();
                out.llms.clear();
                return out;
            }
            *field = static_cast<int64_t>(*v);
        }
        hilo::StatusOr<double> tied = t->Number(r, "tied");
        if (!tied.ok() || (*tied != 0 && *tied != 1))
        {
            out.status = tied.ok()
                             ? hilo::Status::InvalidArgument("models/data/llms.csv: " + p.name +
                                                             ": tied must be 0 or 1")
                             : tied.status();
            out.llms.clear();
            return out;
        }
        p.tied_embeddings = *tied == 1;
        out.llms.push_back(p);
    }
    return out;
}

const Loaded&
Table()
{
    static const Loaded loaded = Load();
    return loaded;
}

} // namespace

const std::vector<std::string>&
LlmTargetNames()
{
    static const std::vector<std::string> kNames{"q", "k", "v", "o", "gate", "up", "down"};
    return kNames;
}

hilo::StatusOr<std::pair<int64_t, int64_t>>
LlmProfile::ModuleShape(const std::string& target) const
{
    if (target == "q")
        return std::make_pair(q_width(), hidden);
    if (target == "k" || target == "v")
        return std::make_pair(kv_width(), hidden);
    if (target == "o")
        return std::make_pair(hidden, q_width());
    if (target == "gate" || target == "up")
        return std::make_pair(intermediate, hidden);
    if (target == "down")
        return std::make_pair(hidden, intermediate);
    return hilo::Status::InvalidArgument("unknown LoRA target '" + target +
                                         "'; allowed: q, k, v, o, gate, up, down");
}

int64_t
LlmProfile::MatmulParams() const
{
    const int64_t per_layer = hidden * q_width() + 2 * hidden * kv_width() + q_width() * hidden +
                              3 * hidden * intermediate;
    return layers * per_layer + vocab * hidden;
}

int64_t
LlmProfile::Params() const
{
    const int64_t norms = layers * 2 * hidden + hidden;
    const int64_t embedding = vocab * hidden;
    return MatmulParams() + norms + (tied_embeddings ? 0 : embedding);
}

hilo::StatusOr<int64_t>
LlmProfile::LoraParams(int64_t rank, const std::vector<std::string>& targets) const
{
    if (rank < 1)
    {
        return hilo::Status::InvalidArgument("LoRA rank must be >= 1");
    }
    std::set<std::string> seen;
    int64_t per_layer = 0;
    for (const std::string& t : targets)
    {
        auto shape = ModuleShape(t);
        if (!shape.ok())
        {
            return shape.status();
        }
        if (!seen.insert(t).second)
        {
            return hilo::Status::InvalidArgument("LoRA target '" + t + "' listed twice");
        }
        per_layer += rank * (shape->first + shape->second);
    }
    return layers * per_layer;
}

hilo::StatusOr<int64_t>
LlmProfile::AdapterBytes(int64_t rank, const std::vector<std::string>& targets) const
{
    hilo::StatusOr<int64_t> p = LoraParams(rank, targets);
    if (!p.ok())
    {
        return p.status();
    }
    return *p * 2;
}

hilo::StatusOr<hilo::AdapterLayout>
LlmProfile::LoraLayout(int64_t rank, const std::vector<std::string>& targets) const
{
    HILO_RETURN_IF_ERROR(LoraParams(rank, targets).status());
    std::vector<hilo::MatrixSpec> specs;
    for (int64_t l = 0; l < layers; ++l)
    {
        for (const std::string& t : LlmTargetNames())
        {
            if (std::find(targets.begin(), targets.end(), t) == targets.end())
            {
                continue;
            }
            auto [d_out, d_in] = *ModuleShape(t);
            std::string prefix = "layers." + std::to_string(l) + "." + t;
            specs.push_back({prefix + ".lora_A", rank, d_in});
            specs.push_back({prefix + ".lora_B", d_out, rank});
        }
    }
    return hilo::AdapterLayout::Create(std::move(specs));
}

const std::vector<LlmProfile>&
ListLlms()
{
    return Table().llms;
}

hilo::StatusOr<LlmProfile>
FindLlm(const std::string& name)
{
    const Loaded& t = Table();
    if (!t.status.ok())
    {
        return t.status;
    }
    std::string known;
    for (const LlmProfile& p : t.llms)
    {
        if (p.name == name)
        {
            return p;
        }
        known += (known.empty() ? "" : ", ") + p.name;
    }
    return hilo::Status::NotFound("unknown LLM profile '" + name + "'; known: " + known);
}

} // namespace models
