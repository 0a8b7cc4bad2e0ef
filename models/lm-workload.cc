#include "models/lm-workload.h"

#include "models/cpu-timer.h"
#include "models/seeded-rng.h"

#include <algorithm>
#include <cmath>

namespace models
{

TinyLmOptions
LmWorkload::ModelOptions(const WorkloadConfig& config)
{
    TinyLmOptions o;
    o.vocab = config.vocab;
    o.d_model = config.d_model;
    o.layers = config.layers;
    o.heads = config.heads;
    o.context = config.context;
    o.lora_rank = config.lora_rank;
    o.lora_alpha = config.lora_alpha;
    o.lora_targets = config.lora_targets;
    o.seed = config.seed;
    return o;
}

LmWorkload::LmWorkload(const WorkloadConfig& config, TinyLm student, WorkloadKind kind)
  : m_config(config)
  , m_student(std::move(student))
  , m_kind(kind)
{
}

hilo::AdapterState
LmWorkload::InitialAdapter() const
{
    hilo::AdapterState s;
    s.theta = m_student.InitialLora(SeededRng::Mix({m_config.seed, kStreamInitialAdapter}));
    s.version = 0;
    return s;
}

at::Tensor
LmWorkload::Prompts(uint64_t seed, int64_t count, bool /*eval*/) const
{
    at::Tensor p = at::empty({count, m_config.prompt_tokens}, at::kLong);
    auto a = p.accessor<int64_t, 2>();
    SeededRng rng(seed);
    for (int64_t i = 0; i < count; ++i)
    {
        for (int64_t j = 0; j < m_config.prompt_tokens; ++j)
        {
            a[i][j] = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(m_config.vocab)));
        }
    }
    return p;
}

void
LmWorkload::Score(const at::Tensor& tokens, std::vector<float>* rewards) const
{
}

hilo::StatusOr<std::string>
LmWorkload::Rollout(const std::vector<float>& theta, uint64_t step, uint32_t worker,
                    RolloutInfo* info)
{
    std::vector<RolloutInfo> infos;
    auto batches = RolloutMany(theta, step, {worker}, info ? &infos : nullptr);
    if (!batches.ok())
    {
        return batches.status();
    }
    if (info != nullptr)
    {
        *info = infos[0];
    }
    return std::move((*batches)[0]);
}

hilo::StatusOr<std::vector<std::string>>
LmWorkload::RolloutMany(const std::vector<float>& theta, uint64_t step,
                        const std::vector<uint32_t>& workers, std::vector<RolloutInfo>* infos)
{
    CpuTimer timer;
    if (static_cast<int64_t>(theta.size()) != layout().numel())
    {
        return hilo::Status::InvalidArgument("theta has " + std::to_string(theta.size()) +
                                             " values, layout needs " +
                                             std::to_string(layout().numel()));
    }
    const int64_t g = m_config.group_size;
    const int64_t rows = m_config.prompts_per_worker * g;
    std::vector<std::string> out;
    if (infos != nullptr)
    {
        infos->assign(workers.size(), RolloutInfo());
    }
    // Generations of at most kRolloutChunkRows rows (whole workers): a fleet's KV cache and
    // activations in one generation would be gigabytes, streamed through once per token; in
    // chunks they stay small and their memory is reused. Each worker's rows sample exactly as
    // they would alone (TinyLm::GenerateStreams), so chunking does not change a byte.
    const size_t per_chunk =
        static_cast<size_t>(std::max<int64_t>(1, kRolloutChunkRows / std::max<int64_t>(rows, 1)));
    for (size_t first = 0; first < workers.size(); first += per_chunk)
    {
        const size_t last = std::min(workers.size(), first + per_chunk);
        // Every worker's own prompt and sampling streams, one batched generation.
        std::vector<at::Tensor> prompts;
        std::vector<SampleStream> streams;
        for (size_t i = first; i < last; ++i)
        {
            prompts.push_back(
                Prompts(SeededRng::Mix({m_config.seed, kStreamPrompts, step, workers[i]}),
                        m_config.prompts_per_worker, /*eval=*/false)
                    .repeat_interleave(g, /*dim=*/0));
            streams.push_back(SampleStream{
                rows, SeededRng::Mix({m_config.seed, kStreamSampling, step, workers[i]})});
        }
        Generation gen =
            m_student.GenerateStreams(at::cat(prompts, /*dim=*/0), m_config.gen_tokens,
                                      m_config.temperature, m_student.LoraTensor(theta), streams);
        for (size_t i = first; i < last; ++i)
        {
            const int64_t row0 = int64_t(i - first) * rows;
            const at::Tensor tokens = gen.tokens.narrow(0, row0, rows).contiguous();
            const at::Tensor logp = gen.logp.narrow(0, row0, rows).contiguous();
            TrajectoryBatch b;
            b.kind = m_kind;
            b.step = step;
            b.worker = workers[i];
            b.sequences = static_cast<uint32_t>(rows);
            b.prompt_len = static_cast<uint32_t>(m_config.prompt_tokens);
            b.gen_len = static_cast<uint32_t>(m_config.gen_tokens);
            b.group_size = static_cast<uint32_t>(g);
            b.vocab = static_cast<uint32_t>(m_config.vocab);
            const int64_t* tok = tokens.data_ptr<int64_t>();
            b.tokens.assign(tok, tok + tokens.numel());
            const float* lp = logp.data_ptr<float>();
            b.behaviour_logp.assign(lp, lp + logp.numel());
            b.rewards.assign(b.sequences, 0.0f);
            Score(tokens, &b.rewards);
            if (infos != nullptr)
            {
                (*infos)[i].sequences = b.sequences;
                (*infos)[i].prompt_tokens = int64_t(b.sequences) * b.prompt_len;
                (*infos)[i].generated_tokens = int64_t(b.sequences) * b.gen_len;
            }
            out.push_back(b.Serialize());
        }
    }
    if (infos != nullptr)
    {
        const double cpu = timer.Seconds() / static_cast<double>(workers.size());
        for (RolloutInfo& info : *infos)
        {
            info.cpu_s = cpu;
        }
    }
    return out;
}

hilo::StatusOr<std::vector<float>>
LmWorkload::Gradient(const std::vector<float>& theta, const std::vector<std::string>& batches,
                     GradientInfo* info)
{
    CpuTimer timer;
    const int64_t numel = layout().numel();
    if (static_cast<int64_t>(theta.size()) != numel)
    {
        return hilo::Status::InvalidArgument("theta has " + std::to_string(theta.size()) +
                                             " values, layout needs " + std::to_string(numel));
    }
    if (batches.empty())
    {
        return hilo::Status::InvalidArgument("Gradient needs at least one trajectory batch");
    }
    std::vector<int64_t> tokens;
    std::vector<float> logp;
    std::vector<float> rewards;
    for (size_t i = 0; i < batches.size(); ++i)
    {
        hilo::StatusOr<TrajectoryBatch> b = TrajectoryBatch::Parse(batches[i]);
        if (!b.ok())
        {
            return hilo::Status::Corruption("batch " + std::to_string(i) + ": " +
                                            b.status().message());
        }
        if (b->kind != m_kind || b->prompt_len != m_config.prompt_tokens ||
            b->gen_len != m_config.gen_tokens || b->group_size != m_config.group_size ||
            b->vocab != m_config.vocab)
        {
            return hilo::Status::InvalidArgument("batch " + std::to_string(i) +
                                                 " was made under another workload config");
        }
        tokens.insert(tokens.end(), b->tokens.begin(), b->tokens.end());
        logp.insert(logp.end(), b->behaviour_logp.begin(), b->behaviour_logp.end());
        rewards.insert(rewards.end(), b->rewards.begin(), b->rewards.end());
    }
    MergedBatch m;
    m.prompt_len = m_config.prompt_tokens;
    m.gen_len = m_config.gen_tokens;
    m.group_size = m_config.group_size;
    const int64_t n = static_cast<int64_t>(rewards.size());
    m.tokens = at::from_blob(tokens.data(), {n, m.prompt_len + m.gen_len}, at::kLong).clone();
    m.behaviour_logp = at::from_blob(logp.data(), {n, m.gen_len}, at::kFloat).clone();
    m.rewards = at::from_blob(rewards.data(), {n}, at::kFloat).clone();

    at::Tensor lora = m_student.LoraTensor(theta).requires_grad_(true);
    const int64_t per_pass = m_config.micro_batch_sequences > 0
                                 ? std::min<int64_t>(m_config.micro_batch_sequences, n)
                                 : n;
    double loss_value = 0.0;
    if (per_pass == n)
    {
        at::Tensor loss = Loss(lora, m);
        loss.backward();
        loss_value = loss.item<double>();
    }
    else
    {
        // Passes of whole groups (per_pass is a multiple of group_size, and so is n): each
        // loss is a mean over its rows, so weighting it by rows / n makes the accumulated
        // gradient that of the mean over all rows; only one pass's graph is alive at a time.
        for (int64_t start = 0; start < n; start += per_pass)
        {
            const int64_t rows = std::min(per_pass, n - start);
            MergedBatch part = m;
            part.tokens = m.tokens.narrow(0, start, rows);
            part.behaviour_logp = m.behaviour_logp.narrow(0, start, rows);
            part.rewards = m.rewards.narrow(0, start, rows);
            const double weight = static_cast<double>(rows) / static_cast<double>(n);
            at::Tensor loss = Loss(lora, part);
            (loss * weight).backward();
            loss_value += weight * loss.item<double>();
        }
    }
    at::Tensor grad_t = lora.grad().contiguous();
    const float* gp = grad_t.data_ptr<float>();
    std::vector<float> grad(gp, gp + numel);

    // Global norm in a fixed order (double accumulator), then one scale.
    double sq = 0.0;
    for (float g : grad)
    {
        sq += static_cast<double>(g) * static_cast<double>(g);
    }
    const double norm = std::sqrt(sq);
    if (m_config.grad_clip_norm > 0 && norm > m_config.grad_clip_norm)
    {
        const float scale = static_cast<float>(m_config.grad_clip_norm / (norm + 1e-6));
        for (float& g : grad)
        {
            g *= scale;
        }
    }
    if (info != nullptr)
    {
        info->loss = loss_value;
        info->grad_norm = norm;
        info->tokens = n * m.gen_len;
        info->passes = (n + per_pass - 1) / per_pass;
        info->max_pass_sequences = per_pass;
        info->cpu_s = timer.Seconds();
    }
    return grad;
}

} // namespace models
