#include "models/llm-profile.h"

#include "models/csv-table.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

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

// Why the dense/MoE columns of `p` contradict each other ("" when they do not).
std::string
Inconsistent(const LlmProfile& p)
{
    if (!p.mla() && (p.q_lora_rank != 0 || p.rope_head_dim != 0 || p.v_head_dim != 0))
        return "a model without latent attention (kv_lora_rank 0) has q_lora_rank, rope_head_dim "
               "and v_head_dim 0";
    if (p.mla() && p.v_head_dim < 1)
        return "latent attention (kv_lora_rank > 0) needs v_head_dim >= 1";
    if (!p.moe())
    {
        if (p.active_experts != 0 || p.expert_intermediate != 0 || p.shared_experts != 0 ||
            p.dense_layers != 0)
            return "a dense model (experts 0) has active_experts, expert_intermediate, "
                   "shared_experts and dense_layers 0";
        if (p.intermediate < 1)
            return "a dense model needs intermediate >= 1";
        return "";
    }
    if (p.active_experts < 1 || p.active_experts > p.experts)
        return "active_experts must be in [1, experts]";
    if (p.expert_intermediate < 1)
        return "an MoE model needs expert_intermediate >= 1";
    if (p.dense_layers >= p.layers)
        return "dense_layers must be below layers";
    if (p.dense_layers > 0 && p.intermediate < 1)
        return "dense_layers > 0 needs intermediate >= 1";
    return "";
}

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
        // {column, field, smallest allowed value}
        const std::vector<std::tuple<const char*, int64_t*, int64_t>> ints{
            {"layers", &p.layers, 1},
            {"hidden", &p.hidden, 1},
            {"intermediate", &p.intermediate, 0},
            {"heads", &p.heads, 1},
            {"kv_heads", &p.kv_heads, 1},
            {"head_dim", &p.head_dim, 1},
            {"vocab", &p.vocab, 1},
            {"experts", &p.experts, 0},
            {"active_experts", &p.active_experts, 0},
            {"expert_intermediate", &p.expert_intermediate, 0},
            {"shared_experts", &p.shared_experts, 0},
            {"dense_layers", &p.dense_layers, 0},
            {"q_lora_rank", &p.q_lora_rank, 0},
            {"kv_lora_rank", &p.kv_lora_rank, 0},
            {"rope_head_dim", &p.rope_head_dim, 0},
            {"v_head_dim", &p.v_head_dim, 0}};
        for (const auto& [column, field, least] : ints)
        {
            hilo::StatusOr<double> v = t->Number(r, column);
            if (!v.ok() || *v < static_cast<double>(least) || std::floor(*v) != *v)
            {
                out.status = v.ok() ? hilo::Status::InvalidArgument(
                                          "models/data/llms.csv: " + p.name + ": " + column +
                                          (least > 0 ? " must be a positive integer"
                                                     : " must be an integer >= 0"))
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
        const std::string shape = Inconsistent(p);
        if (!shape.empty())
        {
            out.status =
                hilo::Status::InvalidArgument("models/data/llms.csv: " + p.name + ": " + shape);
            out.llms.clear();
            return out;
        }
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

const std::vector<std::string>&
LlmAllTargetNames()
{
    static const std::vector<std::string> kNames{"q",    "k",  "v",    "o",
                                                 "gate", "up", "down", "experts"};
    return kNames;
}

hilo::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
LlmProfile::Modules(int64_t layer, const std::string& target) const
{
    using Shapes = std::vector<std::pair<int64_t, int64_t>>;
    const bool moe_layer = moe() && layer >= dense_layers;
    if (mla() && (target == "q" || target == "k" || target == "v"))
    {
        if (target == "k")
            return Shapes{{kv_lora_rank + rope_head_dim, hidden}};
        if (target == "v")
            return Shapes{{heads * (head_dim + v_head_dim), kv_lora_rank}};
        if (q_lora_rank == 0)
            return Shapes{{q_width(), hidden}};
        return Shapes{{q_lora_rank, hidden}, {q_width(), q_lora_rank}};
    }
    if (target == "q")
        return Shapes{{q_width(), hidden}};
    if (target == "k" || target == "v")
        return Shapes{{kv_width(), hidden}};
    if (target == "o")
        return Shapes{{hidden, o_width()}};
    if (target == "gate" || target == "up" || target == "down")
    {
        const int64_t width = moe_layer ? expert_intermediate : intermediate;
        const int64_t count = moe_layer ? shared_experts : 1;
        const std::pair<int64_t, int64_t> shape =
            target == "down" ? std::make_pair(hidden, width) : std::make_pair(width, hidden);
        return Shapes(static_cast<size_t>(count), shape);
    }
    if (target == "experts")
    {
        Shapes out;
        if (moe_layer)
        {
            for (int64_t e = 0; e < experts; ++e)
            {
                out.emplace_back(expert_intermediate, hidden); // gate
                out.emplace_back(expert_intermediate, hidden); // up
                out.emplace_back(hidden, expert_intermediate); // down
            }
        }
        return out;
    }
    return hilo::Status::InvalidArgument("unknown LoRA target '" + target +
                                         "'; allowed: q, k, v, o, gate, up, down, experts");
}

int64_t
LlmProfile::MatmulParams() const
{
    int64_t attention = 0;
    for (const char* target : {"q", "k", "v", "o"})
    {
        const auto modules = Modules(0, target); // valid targets: never an error
        for (const auto& [d_out, d_in] : *modules)
            attention += d_out * d_in;
    }
    const int64_t dense_mlp = 3 * hidden * intermediate;
    const int64_t dense_count = moe() ? dense_layers : layers;
    const int64_t moe_mlp = experts * hidden + (shared_experts + experts) * expert_params();
    return layers * attention + dense_count * dense_mlp + moe_layers() * moe_mlp + vocab * hidden;
}

int64_t
LlmProfile::ActiveMatmulParams() const
{
    return MatmulParams() - moe_layers() * (experts - active_experts) * expert_params();
}

double
LlmProfile::TouchedMatmulParams(int64_t tokens) const
{
    if (!moe() || tokens < 1)
        return static_cast<double>(ActiveMatmulParams());
    const double e = static_cast<double>(experts);
    const double miss = 1.0 - static_cast<double>(active_experts) / e;
    const double touched = e * (1.0 - std::pow(miss, static_cast<double>(tokens)));
    const double routed_active = static_cast<double>(moe_layers()) *
                                 static_cast<double>(active_experts) *
                                 static_cast<double>(expert_params());
    return static_cast<double>(ActiveMatmulParams()) - routed_active +
           static_cast<double>(moe_layers()) * touched * static_cast<double>(expert_params());
}

int64_t
LlmProfile::Params() const
{
    // MLA normalises its q and kv latents too (q_a_layernorm, kv_a_layernorm).
    const int64_t norms = layers * (2 * hidden + q_lora_rank + kv_lora_rank) + hidden;
    const int64_t embedding = vocab * hidden;
    return MatmulParams() + norms + (tied_embeddings ? 0 : embedding);
}

namespace
{

// The LoRA parameters of module `index` of `target` (shape d_out x d_in) that every
// tensor-parallel GPU holds whole (see the file comment of llm-profile.h).
int64_t
ReplicatedLora(const LlmProfile& p, const std::string& target, size_t index, int64_t rank,
               int64_t d_out, int64_t d_in)
{
    const bool replicated_linear =
        p.mla() && ((target == "q" && p.q_lora_rank > 0 && index == 0) || target == "k");
    if (replicated_linear)
        return rank * (d_in + d_out);
    const bool row_parallel = target == "o" || target == "down" ||
                              (target == "experts" && index % 3 == 2); // an expert's down
    return row_parallel ? rank * d_out : rank * d_in;
}

// Sums over every layer and module of `targets`: r x (d_in + d_out) (all) and the factors tensor
// parallelism replicates (ReplicatedLora).
hilo::Status
SumLora(const LlmProfile& p, int64_t rank, const std::vector<std::string>& targets, int64_t* all,
        int64_t* replicated)
{
    if (rank < 1)
    {
        return hilo::Status::InvalidArgument("LoRA rank must be >= 1");
    }
    std::set<std::string> seen;
    *all = 0;
    *replicated = 0;
    for (const std::string& t : targets)
    {
        if (!seen.insert(t).second)
        {
            return hilo::Status::InvalidArgument("LoRA target '" + t + "' listed twice");
        }
        for (int64_t l = 0; l < p.layers; ++l)
        {
            auto modules = p.Modules(l, t);
            if (!modules.ok())
            {
                return modules.status();
            }
            for (size_t i = 0; i < modules->size(); ++i)
            {
                const auto [d_out, d_in] = (*modules)[i];
                *all += rank * (d_out + d_in);
                *replicated += ReplicatedLora(p, t, i, rank, d_out, d_in);
            }
        }
    }
    return hilo::Status::Ok();
}

} // namespace

hilo::StatusOr<int64_t>
LlmProfile::LoraParams(int64_t rank, const std::vector<std::string>& targets) const
{
    int64_t all = 0;
    int64_t replicated = 0;
    HILO_RETURN_IF_ERROR(SumLora(*this, rank, targets, &all, &replicated));
    return all;
}

hilo::StatusOr<int64_t>
LlmProfile::LoraReplicatedParams(int64_t rank, const std::vector<std::string>& targets) const
{
    int64_t all = 0;
    int64_t replicated = 0;
    HILO_RETURN_IF_ERROR(SumLora(*this, rank, targets, &all, &replicated));
    return replicated;
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
    static const char* const kExpertParts[] = {"gate", "up", "down"};
    std::vector<hilo::MatrixSpec> specs;
    for (int64_t l = 0; l < layers; ++l)
    {
        for (const std::string& t : LlmAllTargetNames())
        {
            if (std::find(targets.begin(), targets.end(), t) == targets.end())
            {
                continue;
            }
            const auto modules = *Modules(l, t);
            for (size_t i = 0; i < modules.size(); ++i)
            {
                auto [d_out, d_in] = modules[i];
                std::string prefix = "layers." + std::to_string(l) + ".";
                if (t == "experts")
                    prefix += "experts." + std::to_string(i / 3) + "." + kExpertParts[i % 3];
                else if (modules.size() > 1)
                    prefix += t + "." + std::to_string(i); // several shared experts
                else
                    prefix += t;
                specs.push_back({prefix + ".lora_A", rank, d_in});
                specs.push_back({prefix + ".lora_B", d_out, rank});
            }
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
