#include "models/compute-model.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace models
{
namespace
{

// "145446715392 bytes (145.4 GB)".
std::string
Bytes(double bytes)
{
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(0);
    os << bytes << " bytes (";
    os.precision(bytes < 1e9 ? 3 : 1);
    os << bytes / 1e9 << " GB)";
    return os.str();
}

int64_t
CeilDiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// Bytes of weights one GPU of `node` holds (bf16, split across tp).
double
WeightBytesPerGpu(const GpuNode& node, const LlmProfile& llm)
{
    return 2.0 * static_cast<double>(CeilDiv(llm.Params(), node.tp()));
}

// KV cache bytes per token of context one GPU holds (KV heads split, at least one per GPU; an
// MLA latent is shared by all heads, so every GPU holds all of it).
double
KvBytesPerTokenPerGpu(const GpuNode& node, const LlmProfile& llm)
{
    if (llm.mla())
        return static_cast<double>(llm.KvBytesPerToken());
    const int64_t heads = CeilDiv(llm.kv_heads, node.tp());
    return static_cast<double>(llm.layers * 2 * heads * llm.head_dim * 2);
}

// A ring all-reduce of `bytes` over the node's GPUs (all of them: tp splits the model over all,
// dp averages the gradient over all).
double
AllReduceSeconds(const GpuNode& node, double bytes, const ComputeOptions& options)
{
    if (node.gpus <= 1)
        return 0.0;
    const double n = static_cast<double>(node.gpus);
    return 2.0 * (n - 1.0) / n * bytes /
               (node.gpu.interconnect_bytes_per_s() * options.interconnect_eff) +
           options.allreduce_latency_s;
}

// The adapter as the node holds it (targets from options).
hilo::StatusOr<AdapterShards>
Shards(const LlmProfile& llm, int64_t lora_rank, const ComputeOptions& options)
{
    hilo::StatusOr<int64_t> lora = llm.LoraParams(lora_rank, options.targets);
    if (!lora.ok())
    {
        return lora.status();
    }
    return AdapterShards(*lora, *llm.LoraReplicatedParams(lora_rank, options.targets));
}

hilo::Status
CheckNode(const GpuNode& node)
{
    if (node.gpus < 1)
    {
        return hilo::Status::InvalidArgument("a node has at least one GPU, got " +
                                             std::to_string(node.gpus));
    }
    return hilo::Status::Ok();
}

} // namespace

hilo::Status
ComputeOptions::Validate() const
{
    for (double f : {prefill_mfu, decode_mbu, decode_mfu, train_mfu, encode_mfu, elementwise_mbu,
                     host_link_eff, interconnect_eff, memory_headroom})
    {
        if (!(f > 0) || f > 1)
        {
            return hilo::Status::InvalidArgument("compute efficiency factors must be in (0, 1]");
        }
    }
    if (!(kernel_launch_s >= 0) || !(adapter_load_overhead_s >= 0) || !(allreduce_latency_s >= 0))
    {
        return hilo::Status::InvalidArgument("overheads must be >= 0");
    }
    return hilo::Status::Ok();
}

hilo::Status
CheckNodeMemory(const GpuNode& node, const LlmProfile& llm, int64_t lora_rank,
                int64_t context_tokens, NodeWork work, const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    HILO_RETURN_IF_ERROR(CheckNode(node));
    hilo::StatusOr<AdapterShards> adapter = Shards(llm, lora_rank, options);
    if (!adapter.ok())
    {
        return adapter.status();
    }
    const double weights = WeightBytesPerGpu(node, llm);
    const bool train = work == NodeWork::kTrain;
    const double lora = (train ? 16.0 : 2.0) * static_cast<double>(adapter->PerGpu(node));
    const int64_t context = std::max<int64_t>(context_tokens, 1);
    const double kv = train ? 0.0 : static_cast<double>(context) * KvBytesPerTokenPerGpu(node, llm);
    const double need = weights + lora + kv;
    const double usable = node.gpu.mem_bytes() * options.memory_headroom;
    if (need <= usable)
    {
        return hilo::Status::Ok();
    }
    std::ostringstream os;
    os << llm.name << " does not fit a node of " << node.gpus << " x " << node.gpu.name;
    if (node.gpus > 1)
        os << " (" << NodeParallelNames()[static_cast<size_t>(node.parallel)] << ")";
    os << (train ? " for training" : " for rollouts") << ": each " << node.gpu.name << " needs "
       << Bytes(need) << " = weights " << Bytes(weights)
       << (train ? " + LoRA adapter, gradient and AdamW state " : " + LoRA adapter ")
       << Bytes(lora);
    if (!train)
        os << " + KV cache of one " << context << "-token sequence " << Bytes(kv);
    os << ", but an " << node.gpu.name << " holds " << Bytes(node.gpu.mem_bytes()) << ", "
       << Bytes(usable) << " usable at memory_headroom " << options.memory_headroom;
    if (node.tp() < node.gpus || node.gpus == 1)
        os << "; split the model over more GPUs (gpus: N parallel: \"tp\") or use a larger GPU";
    else
        os << "; use more GPUs per node or a larger GPU";
    return hilo::Status::InvalidArgument(os.str());
}

hilo::StatusOr<double>
RolloutSeconds(const GpuNode& node, const LlmProfile& llm, int64_t lora_rank, int64_t sequences,
               int64_t prompt_tokens, int64_t gen_tokens, const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    HILO_RETURN_IF_ERROR(CheckNode(node));
    if (sequences < 0 || prompt_tokens < 0 || gen_tokens < 0)
    {
        return hilo::Status::InvalidArgument("sequences and token counts must be >= 0");
    }
    const int64_t ctx = prompt_tokens + gen_tokens;
    HILO_RETURN_IF_ERROR(CheckNodeMemory(node, llm, lora_rank, ctx, NodeWork::kRollout, options));
    const AdapterShards adapter = *Shards(llm, lora_rank, options);
    const double tp = static_cast<double>(node.tp());
    const double l = static_cast<double>(adapter.numel);
    const double l_gpu = static_cast<double>(adapter.PerGpu(node));
    const double n = static_cast<double>(llm.ActiveMatmulParams()) + l;
    const double peak = node.gpu.flops_per_s() * tp;
    const double bw = node.gpu.mem_bytes_per_s();
    const double kv_tok = KvBytesPerTokenPerGpu(node, llm);
    const double free_bytes =
        node.gpu.mem_bytes() * options.memory_headroom - WeightBytesPerGpu(node, llm) - 2.0 * l_gpu;
    const double per_seq = static_cast<double>(std::max<int64_t>(ctx, 1)) * kv_tok;
    // CheckNodeMemory found room for one sequence; max() guards the rounding of this division.
    const int64_t b_max =
        std::max<int64_t>(1, static_cast<int64_t>(std::floor(free_bytes / per_seq)));
    const double p = static_cast<double>(prompt_tokens);
    const double layers = static_cast<double>(llm.layers);
    // Per context token and layer, attention multiplies q with the keys (q_width) and the
    // weights with the values (o_width): 2 x (q_width + o_width) flops, 4 x qw.
    const double qw = 0.5 * static_cast<double>(llm.q_width() + llm.o_width());
    const double act_bytes = static_cast<double>(llm.hidden) * 2.0; // one token's activations
    // Replicas serve their shares in parallel: the busiest one's time.
    const int64_t share = CeilDiv(sequences, node.replicas());
    double total = 0;
    for (int64_t done = 0; done < share; done += b_max)
    {
        const int64_t wave = std::min(b_max, share - done);
        const double b = static_cast<double>(wave);
        const double prefill_flops = b * p * 2.0 * n + b * 2.0 * layers * p * p * qw;
        total += prefill_flops / (peak * options.prefill_mfu);
        if (node.tp() > 1 && prompt_tokens > 0)
            total += 2.0 * layers * AllReduceSeconds(node, b * p * act_bytes, options);
        const double weight_bytes = 2.0 * (llm.TouchedMatmulParams(wave) / tp + l_gpu);
        const double step_allreduce =
            node.tp() > 1 ? 2.0 * layers * AllReduceSeconds(node, b * act_bytes, options) : 0.0;
        for (int64_t j = 0; j < gen_tokens; ++j)
        {
            const double c = p + static_cast<double>(j);
            const double bytes = weight_bytes + b * c * kv_tok;
            const double flops = b * (2.0 * n + 4.0 * layers * c * qw);
            total +=
                std::max(bytes / (bw * options.decode_mbu), flops / (peak * options.decode_mfu)) +
                step_allreduce;
        }
    }
    return total;
}

hilo::StatusOr<double>
TrainStepSeconds(const GpuNode& node, const LlmProfile& llm, int64_t lora_rank, int64_t tokens,
                 const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    HILO_RETURN_IF_ERROR(CheckNode(node));
    if (tokens < 0)
    {
        return hilo::Status::InvalidArgument("tokens must be >= 0");
    }
    HILO_RETURN_IF_ERROR(CheckNodeMemory(node, llm, lora_rank, 0, NodeWork::kTrain, options));
    const AdapterShards adapter = *Shards(llm, lora_rank, options);
    const double l = static_cast<double>(adapter.numel);
    const double flops = static_cast<double>(tokens) *
                         (4.0 * static_cast<double>(llm.ActiveMatmulParams()) + 6.0 * l);
    double seconds =
        flops / (node.gpu.flops_per_s() * static_cast<double>(node.gpus) * options.train_mfu);
    if (node.tp() > 1)
    {
        const double act = static_cast<double>(tokens) * static_cast<double>(llm.hidden) * 2.0;
        seconds += 4.0 * static_cast<double>(llm.layers) * AllReduceSeconds(node, act, options);
    }
    if (node.replicas() > 1)
    {
        seconds += AllReduceSeconds(node, 4.0 * l, options);
    }
    return seconds;
}

hilo::StatusOr<double>
EncodeSeconds(const GpuNode& node, const hilo::AdapterLayout& layout, const std::string& compressor,
              int64_t rank, const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    HILO_RETURN_IF_ERROR(CheckNode(node));
    const bool spar = compressor == "spar" || compressor == "sparq";
    const bool powersgd = compressor == "powersgd";
    const bool elementwise = compressor == "dense" || compressor == "topk" ||
                             compressor == "randk" || compressor == "quant" ||
                             compressor == "pulse";
    if (!spar && !powersgd && !elementwise)
    {
        return hilo::Status::NotSupported(
            "no encode cost model for compressor '" + compressor +
            "'; known: spar, sparq, powersgd, dense, topk, randk, quant, pulse");
    }
    if ((spar || powersgd) && rank < 1)
    {
        return hilo::Status::InvalidArgument("encode rank must be >= 1");
    }
    double flops = 0;
    double partial_bytes = 0; // r x r partial sums all-reduced across tensor-parallel GPUs
    for (const hilo::MatrixSpec& m : layout.matrices())
    {
        const double rows = static_cast<double>(m.rows);
        const double cols = static_cast<double>(m.cols);
        const double s = static_cast<double>(std::min(m.rows, m.cols));
        const double k = std::min(static_cast<double>(rank), s);
        if (spar)
        {
            flops += 2.0 * rows * cols * s + 10.0 * s * s * s + 2.0 * rows * cols * k;
        }
        else if (powersgd)
        {
            flops += 4.0 * rows * cols * k + 2.0 * std::max(rows, cols) * k * k;
        }
        partial_bytes += 4.0 * k * k;
    }
    const double tp = static_cast<double>(node.tp());
    const double numel = static_cast<double>(layout.numel());
    const double bytes = compressor == "dense" ? 4.0 * numel : 16.0 * numel;
    const double kernels = spar       ? 6.0 * static_cast<double>(layout.size())
                           : powersgd ? 4.0 * static_cast<double>(layout.size())
                                      : 1.0;
    double seconds = flops / (node.gpu.flops_per_s() * tp * options.encode_mfu) +
                     bytes / (node.gpu.mem_bytes_per_s() * tp * options.elementwise_mbu) +
                     kernels * options.kernel_launch_s;
    if (node.tp() > 1 && (spar || powersgd))
    {
        seconds += AllReduceSeconds(node, partial_bytes, options);
    }
    return seconds;
}

hilo::StatusOr<double>
DecodeReplaySeconds(const GpuNode& node, const AdapterShards& adapter, const std::string& strategy,
                    const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    HILO_RETURN_IF_ERROR(CheckNode(node));
    double bytes_per_param = 0;
    if (strategy == "hilo")
    {
        bytes_per_param = 32;
    }
    else if (strategy == "delta" || strategy == "primal")
    {
        bytes_per_param = 16;
    }
    else if (strategy == "full")
    {
        bytes_per_param = 6;
    }
    else
    {
        return hilo::Status::NotSupported("no decode cost model for strategy '" + strategy +
                                          "'; known: hilo, delta, primal, full");
    }
    if (adapter.numel < 0 || adapter.replicated < 0 || adapter.replicated > adapter.numel)
    {
        return hilo::Status::InvalidArgument(
            "adapter parameters must be >= 0 and replicated ones at most all");
    }
    return static_cast<double>(adapter.PerGpu(node)) * bytes_per_param /
               (node.gpu.mem_bytes_per_s() * options.elementwise_mbu) +
           3.0 * options.kernel_launch_s;
}

double
AdapterLoadSeconds(const GpuNode& node, const AdapterShards& adapter_bytes,
                   const ComputeOptions& options)
{
    return static_cast<double>(adapter_bytes.PerGpu(node)) /
               (node.gpu.host_bytes_per_s() * options.host_link_eff) +
           options.adapter_load_overhead_s;
}

} // namespace models
