#include "models/tiny-lm.h"

#include "models/grouped-product.h"
#include "models/seeded-rng.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace models
{

const std::vector<std::string>&
LoraTargetNames()
{
    static const std::vector<std::string> kNames{"q", "k", "v", "o", "up", "down"};
    return kNames;
}

namespace
{

bool
IsAttention(const std::string& name)
{
    return name == "q" || name == "k" || name == "v" || name == "o";
}

std::string
Key(int64_t layer, const std::string& name)
{
    return std::to_string(layer) + "." + name;
}

} // namespace

hilo::Status
TinyLmOptions::Validate() const
{
    if (vocab < 2 || vocab > 65535)
    {
        return hilo::Status::InvalidArgument("vocab must be in [2, 65535], got " +
                                             std::to_string(vocab));
    }
    if (d_model < 1 || heads < 1 || d_model % heads != 0)
    {
        return hilo::Status::InvalidArgument(
            "heads must divide d_model (d_model=" + std::to_string(d_model) +
            ", heads=" + std::to_string(heads) + ")");
    }
    if (layers < 1 || context < 2 || mlp_ratio < 1)
    {
        return hilo::Status::InvalidArgument("layers >= 1, context >= 2 and mlp_ratio >= 1");
    }
    if (lora_rank < 1 || !(lora_alpha > 0))
    {
        return hilo::Status::InvalidArgument("lora_rank must be >= 1 and lora_alpha > 0");
    }
    if (!(logit_std > 0))
    {
        return hilo::Status::InvalidArgument("logit_std must be > 0");
    }
    if (lora_targets.empty())
    {
        return hilo::Status::InvalidArgument("lora_targets is empty; allowed: q,k,v,o,up,down");
    }
    std::set<std::string> seen;
    for (const std::string& t : lora_targets)
    {
        const auto& all = LoraTargetNames();
        if (std::find(all.begin(), all.end(), t) == all.end())
        {
            return hilo::Status::InvalidArgument("unknown lora target '" + t +
                                                 "'; allowed: q,k,v,o,up,down");
        }
        if (!seen.insert(t).second)
        {
            return hilo::Status::InvalidArgument("lora target '" + t + "' listed twice");
        }
    }
    return hilo::Status::Ok();
}

struct TinyLm::Cache
{
    std::vector<at::Tensor> k; // per layer [B, H, capacity, dh]
    std::vector<at::Tensor> v;
};

hilo::StatusOr<TinyLm>
TinyLm::Create(const TinyLmOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    TinyLm lm;
    lm.m_options = options;
    const int64_t d = options.d_model;
    const int64_t hidden = options.mlp_ratio * d;
    const int64_t r = options.lora_rank;
    lm.m_lora_scale = options.lora_alpha / static_cast<double>(r);

    at::Generator gen = at::detail::createCPUGenerator(options.seed);
    auto randn = [&](int64_t rows, int64_t cols, double std) {
        return at::randn({rows, cols}, gen, at::kFloat) * std;
    };
    lm.m_embed = randn(options.vocab, d, 1.0);
    lm.m_pos = randn(options.context, d, 0.5);
    // LayerNorm output has unit variance per entry, so logits have std logit_std.
    lm.m_unembed = randn(options.vocab, d, options.logit_std / std::sqrt(double(d)));
    lm.m_mask = at::full({options.context, options.context}, -INFINITY, at::kFloat).triu(1);

    std::set<std::string> targets(options.lora_targets.begin(), options.lora_targets.end());
    std::vector<hilo::MatrixSpec> specs;
    for (int64_t l = 0; l < options.layers; ++l)
    {
        std::map<std::string, at::Tensor> w;
        for (const std::string& name : LoraTargetNames())
        {
            int64_t d_out = name == "up" ? hidden : d;
            int64_t d_in = name == "down" ? hidden : d;
            w[name] = randn(d_out, d_in, 1.0 / std::sqrt(double(d_in)));
            if (targets.count(name))
            {
                std::string prefix =
                    "layers." + std::to_string(l) + (IsAttention(name) ? ".attn." : ".mlp.") + name;
                lm.m_lora_index[Key(l, name)] = specs.size();
                specs.push_back({prefix + ".lora_A", r, d_in});
                specs.push_back({prefix + ".lora_B", d_out, r});
            }
        }
        lm.m_w.push_back(std::move(w));
    }
    hilo::StatusOr<hilo::AdapterLayout> layout = hilo::AdapterLayout::Create(std::move(specs));
    if (!layout.ok())
    {
        return layout.status();
    }
    lm.m_layout = std::move(layout).value();
    return lm;
}

std::vector<float>
TinyLm::InitialLora(uint64_t seed) const
{
    std::vector<float> theta(m_layout.numel(), 0.0f);
    SeededRng rng(seed);
    for (size_t i = 0; i < m_layout.size(); i += 2)
    {
        const hilo::MatrixSpec& a = m_layout.matrix(i); // A: r x d_in; B (i + 1) stays zero
        const double bound = 1.0 / std::sqrt(static_cast<double>(a.cols));
        float* out = theta.data() + m_layout.offset(i);
        for (int64_t j = 0; j < a.numel(); ++j)
        {
            out[j] = static_cast<float>((2.0 * rng.Uniform() - 1.0) * bound);
        }
    }
    return theta;
}

at::Tensor
TinyLm::LoraTensor(const std::vector<float>& theta) const
{
    return at::from_blob(const_cast<float*>(theta.data()), {static_cast<int64_t>(theta.size())},
                         at::kFloat)
        .clone();
}

// x W^T, grouped when `groups` is given (GroupedProduct), else as one product (at::linear).
at::Tensor
Product(const at::Tensor& x, const at::Tensor& w, const std::vector<int64_t>* groups)
{
    return groups ? GroupedProduct(x, w, *groups) : at::linear(x, w);
}

at::Tensor
TinyLm::Linear(const at::Tensor& x, int64_t layer, const std::string& name, const at::Tensor& lora,
               const std::vector<int64_t>* groups) const
{
    at::Tensor y = Product(x, m_w[layer].at(name), groups);
    if (!lora.defined())
    {
        return y;
    }
    auto it = m_lora_index.find(Key(layer, name));
    if (it == m_lora_index.end())
    {
        return y;
    }
    const size_t ia = it->second;
    const hilo::MatrixSpec& sa = m_layout.matrix(ia);
    const hilo::MatrixSpec& sb = m_layout.matrix(ia + 1);
    at::Tensor a = lora.narrow(0, m_layout.offset(ia), sa.numel()).view({sa.rows, sa.cols});
    at::Tensor b = lora.narrow(0, m_layout.offset(ia + 1), sb.numel()).view({sb.rows, sb.cols});
    return y + Product(Product(x, a, groups), b, groups) * m_lora_scale;
}

at::Tensor
TinyLm::Run(const at::Tensor& tokens, int64_t pos0, const at::Tensor& lora, Cache* cache,
            const std::vector<int64_t>* groups) const
{
    const int64_t batch = tokens.size(0);
    const int64_t n = tokens.size(1);
    const int64_t d = m_options.d_model;
    const int64_t heads = m_options.heads;
    const int64_t dh = d / heads;
    const double inv_sqrt_dh = 1.0 / std::sqrt(static_cast<double>(dh));

    at::Tensor x = m_embed.index_select(0, tokens.reshape({-1})).view({batch, n, d}) +
                   m_pos.narrow(0, pos0, n);
    const at::Tensor mask = m_mask.narrow(0, pos0, n).narrow(1, 0, pos0 + n);
    for (int64_t l = 0; l < m_options.layers; ++l)
    {
        at::Tensor h = at::layer_norm(x, {d});
        auto split = [&](const at::Tensor& t)
        {
            return t.view({batch, n, heads, dh}).transpose(1, 2); // [B, H, n, dh]
        };
        at::Tensor q = split(Linear(h, l, "q", lora, groups));
        at::Tensor k = split(Linear(h, l, "k", lora, groups));
        at::Tensor v = split(Linear(h, l, "v", lora, groups));
        if (cache != nullptr)
        {
            cache->k[l].narrow(2, pos0, n).copy_(k);
            cache->v[l].narrow(2, pos0, n).copy_(v);
            k = cache->k[l].narrow(2, 0, pos0 + n);
            v = cache->v[l].narrow(2, 0, pos0 + n);
        }
        at::Tensor att = at::softmax(at::matmul(q, k.transpose(-2, -1)) * inv_sqrt_dh + mask, -1);
        at::Tensor o = at::matmul(att, v).transpose(1, 2).reshape({batch, n, d});
        x = x + Linear(o, l, "o", lora, groups);
        h = at::layer_norm(x, {d});
        x = x + Linear(at::gelu(Linear(h, l, "up", lora, groups)), l, "down", lora, groups);
    }
    return Product(at::layer_norm(x, {d}), m_unembed, groups);
}

at::Tensor
TinyLm::Forward(const at::Tensor& tokens, const at::Tensor& lora) const
{
    return Run(tokens, /*pos0=*/0, lora, /*cache=*/nullptr);
}

Generation
TinyLm::Generate(const at::Tensor& prompts, int64_t gen_tokens, double temperature,
                 const at::Tensor& lora, uint64_t rng_seed) const
{
    return GenerateStreams(prompts, gen_tokens, temperature, lora,
                           {SampleStream{prompts.size(0), rng_seed}});
}

Generation
TinyLm::GenerateStreams(const at::Tensor& prompts, int64_t gen_tokens, double temperature,
                        const at::Tensor& lora, const std::vector<SampleStream>& streams) const
{
    const int64_t batch = prompts.size(0);
    const int64_t plen = prompts.size(1);
    const int64_t vocab = m_options.vocab;
    const int64_t dh = m_options.d_model / m_options.heads;
    // The results are ordinary tensors (made before the guard), so callers may use them anywhere.
    Generation g;
    g.tokens = at::zeros({batch, plen + gen_tokens}, at::kLong);
    g.tokens.narrow(1, 0, plen).copy_(prompts);
    g.logp = at::zeros({batch, gen_tokens}, at::kFloat);
    // Inference mode rather than NoGradGuard: the same kernels without autograd's bookkeeping
    // (version counters, view tracking) on each of the many small operations of a generation.
    c10::InferenceMode inference;
    Cache cache;
    for (int64_t l = 0; l < m_options.layers; ++l)
    {
        // Uninitialised: position p is written (Run) before any attention reads it.
        cache.k.push_back(at::empty({batch, m_options.heads, plen + gen_tokens, dh}, at::kFloat));
        cache.v.push_back(at::empty({batch, m_options.heads, plen + gen_tokens, dh}, at::kFloat));
    }
    auto tok = g.tokens.accessor<int64_t, 2>();
    auto out_lp = g.logp.accessor<float, 2>();

    std::vector<SeededRng> rngs;
    std::vector<size_t> stream_of_row;
    std::vector<int64_t> groups;
    for (size_t i = 0; i < streams.size(); ++i)
    {
        rngs.emplace_back(streams[i].rng_seed);
        stream_of_row.insert(stream_of_row.end(), static_cast<size_t>(streams[i].rows), i);
        groups.push_back(streams[i].rows);
    }
    TORCH_CHECK(static_cast<int64_t>(stream_of_row.size()) == batch,
                "GenerateStreams: the streams cover ", stream_of_row.size(), " rows of ", batch);
    std::vector<double> cdf(vocab);
    at::Tensor logits = Run(prompts, /*pos0=*/0, lora, &cache, &groups).select(1, plen - 1);
    for (int64_t j = 0; j < gen_tokens; ++j)
    {
        at::Tensor lp = at::log_softmax(logits / temperature, -1).contiguous();
        auto lpa = lp.accessor<float, 2>();
        at::Tensor next = at::zeros({batch, 1}, at::kLong);
        auto nexta = next.accessor<int64_t, 2>();
        for (int64_t b = 0; b < batch; ++b)
        {
            double total = 0.0;
            for (int64_t t = 0; t < vocab; ++t)
            {
                total += std::exp(static_cast<double>(lpa[b][t]));
                cdf[t] = total;
            }
            const double u = rngs[stream_of_row[b]].Uniform() * total;
            int64_t pick = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
            pick = std::min(pick, vocab - 1);
            nexta[b][0] = pick;
            tok[b][plen + j] = pick;
            out_lp[b][j] = lpa[b][pick];
        }
        if (j + 1 < gen_tokens)
        {
            logits = Run(next, plen + j, lora, &cache, &groups).select(1, 0);
        }
    }
    return g;
}

TinyLm
TinyLm::WithPlantedDelta(int64_t rank, double decay, double scale, uint64_t seed) const
{
    TinyLm t = *this; // tensors are shared but never modified in place; adapted ones are replaced
    at::Generator gen = at::detail::createCPUGenerator(seed);
    for (int64_t l = 0; l < m_options.layers; ++l)
    {
        for (const std::string& name : LoraTargetNames())
        {
            if (!m_lora_index.count(Key(l, name)))
            {
                continue;
            }
            const at::Tensor& w = m_w[l].at(name);
            const int64_t d_out = w.size(0);
            const int64_t d_in = w.size(1);
            const int64_t k = std::min({rank, d_out, d_in});
            at::Tensor u = std::get<0>(at::linalg_qr(at::randn({d_out, k}, gen, at::kFloat)));
            at::Tensor v = std::get<0>(at::linalg_qr(at::randn({d_in, k}, gen, at::kFloat)));
            const double typical =
                w.norm().item<double>() / std::sqrt(double(std::min(d_out, d_in)));
            std::vector<float> s(k);
            for (int64_t j = 0; j < k; ++j)
            {
                s[j] = static_cast<float>(scale * std::pow(decay, double(j)) * typical);
            }
            at::Tensor sv = at::from_blob(s.data(), {k}, at::kFloat).clone();
            t.m_w[l][name] = w + at::matmul(u * sv, v.t());
        }
    }
    return t;
}

} // namespace models

namespace models
{

std::map<std::string, at::Tensor>
TinyLm::BaseWeights() const
{
    std::map<std::string, at::Tensor> out{
        {"embed", m_embed}, {"pos", m_pos}, {"unembed", m_unembed}};
    for (int64_t l = 0; l < m_options.layers; ++l)
    {
        for (const auto& [name, w] : m_w[l])
        {
            out["layers." + Key(l, name)] = w;
        }
    }
    return out;
}

hilo::StatusOr<TinyLm>
TinyLm::FromBaseWeights(const TinyLmOptions& options,
                        const std::map<std::string, at::Tensor>& weights)
{
    hilo::StatusOr<TinyLm> lm = TinyLm::Create(options);
    if (!lm.ok())
    {
        return lm.status();
    }
    const std::map<std::string, at::Tensor> expected = lm->BaseWeights();
    for (const auto& [name, w] : weights)
    {
        if (!expected.count(name))
        {
            return hilo::Status::InvalidArgument("base weights: unexpected tensor '" + name + "'");
        }
    }
    std::map<std::string, at::Tensor> copies;
    for (const auto& [name, like] : expected)
    {
        auto it = weights.find(name);
        if (it == weights.end())
        {
            return hilo::Status::InvalidArgument("base weights: missing tensor '" + name + "'");
        }
        const at::Tensor& w = it->second;
        if (!w.defined() || w.scalar_type() != at::kFloat || w.sizes() != like.sizes())
        {
            std::string want;
            for (int64_t s : like.sizes())
            {
                want += (want.empty() ? "" : "x") + std::to_string(s);
            }
            return hilo::Status::InvalidArgument("base weights: tensor '" + name +
                                                 "' must be fp32 of shape " + want);
        }
        if (!at::isfinite(w).all().item<bool>())
        {
            return hilo::Status::InvalidArgument("base weights: tensor '" + name +
                                                 "' has non-finite values");
        }
        copies[name] = w.detach().clone().contiguous();
    }
    TinyLm& m = *lm;
    m.m_embed = copies.at("embed");
    m.m_pos = copies.at("pos");
    m.m_unembed = copies.at("unembed");
    for (int64_t l = 0; l < options.layers; ++l)
    {
        for (auto& [name, w] : m.m_w[l])
        {
            w = copies.at("layers." + Key(l, name));
        }
    }
    return lm;
}

} // namespace models
