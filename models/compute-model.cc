#include "models/compute-model.h"

#include <algorithm>
#include <cmath>

namespace models
{

hilo::Status
ComputeOptions::Validate() const
{
    for (double f : {prefill_mfu, decode_mbu, decode_mfu, train_mfu, encode_mfu, elementwise_mbu,
                     host_link_eff, memory_headroom})
    {
        if (!(f > 0) || f > 1)
        {
            return hilo::Status::InvalidArgument("compute efficiency factors must be in (0, 1]");
        }
    }
    if (!(kernel_launch_s >= 0) || !(adapter_load_overhead_s >= 0) || gpus < 1)
    {
        return hilo::Status::InvalidArgument("overheads must be >= 0 and gpus >= 1");
    }
    return hilo::Status::Ok();
}

hilo::StatusOr<double>
RolloutSeconds(const GpuProfile& gpu, const LlmProfile& llm, int64_t lora_rank, int64_t sequences,
               int64_t prompt_tokens, int64_t gen_tokens, const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    if (sequences < 0 || prompt_tokens < 0 || gen_tokens < 0)
    {
        return hilo::Status::InvalidArgument("sequences and token counts must be >= 0");
    }
    hilo::StatusOr<int64_t> lora = llm.LoraParams(lora_rank, options.targets);
    if (!lora.ok())
    {
        return lora.status();
    }
    const double tp = static_cast<double>(options.gpus);
    const double n = static_cast<double>(llm.MatmulParams()) + static_cast<double>(*lora);
    const double peak = gpu.flops_per_s() * tp;
    const double bw = gpu.mem_bytes_per_s() * tp;
    const double kv_tok = static_cast<double>(llm.KvBytesPerToken());
    const double free_bytes = gpu.mem_bytes() * tp * options.memory_headroom -
                              2.0 * static_cast<double>(llm.Params() + *lora);
    const int64_t ctx = prompt_tokens + gen_tokens;
    const double per_seq = static_cast<double>(std::max<int64_t>(ctx, 1)) * kv_tok;
    if (free_bytes < per_seq)
    {
        return hilo::Status::InvalidArgument(
            llm.name + " on " + std::to_string(options.gpus) + "x " + gpu.name +
            ": weights and one sequence's KV cache do not fit in memory");
    }
    const int64_t b_max = static_cast<int64_t>(std::floor(free_bytes / per_seq));
    const double p = static_cast<double>(prompt_tokens);
    const double layers = static_cast<double>(llm.layers);
    const double qw = static_cast<double>(llm.q_width());
    double total = 0;
    for (int64_t done = 0; done < sequences; done += b_max)
    {
        const double b = static_cast<double>(std::min(b_max, sequences - done));
        const double prefill_flops = b * p * 2.0 * n + b * 2.0 * layers * p * p * qw;
        total += prefill_flops / (peak * options.prefill_mfu);
        for (int64_t j = 0; j < gen_tokens; ++j)
        {
            const double c = p + static_cast<double>(j);
            const double bytes = 2.0 * n + b * c * kv_tok;
            const double flops = b * (2.0 * n + 4.0 * layers * c * qw);
            total +=
                std::max(bytes / (bw * options.decode_mbu), flops / (peak * options.decode_mfu));
        }
    }
    return total;
}

hilo::StatusOr<double>
TrainStepSeconds(const GpuProfile& gpu, const LlmProfile& llm, int64_t lora_rank, int64_t tokens,
                 const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
    if (tokens < 0)
    {
        return hilo::Status::InvalidArgument("tokens must be >= 0");
    }
    hilo::StatusOr<int64_t> lora = llm.LoraParams(lora_rank, options.targets);
    if (!lora.ok())
    {
        return lora.status();
    }
    const double tp = static_cast<double>(options.gpus);
    // bf16 weights + fp32 adapter, gradient, AdamW m and v.
    const double need = 2.0 * static_cast<double>(llm.Params()) + 16.0 * static_cast<double>(*lora);
    if (need > gpu.mem_bytes() * tp * options.memory_headroom)
    {
        return hilo::Status::InvalidArgument(llm.name + " LoRA training does not fit on " +
                                             std::to_string(options.gpus) + "x " + gpu.name);
    }
    const double flops =
        static_cast<double>(tokens) *
        (4.0 * static_cast<double>(llm.MatmulParams()) + 6.0 * static_cast<double>(*lora));
    return flops / (gpu.flops_per_s() * tp * options.train_mfu);
}

hilo::StatusOr<double>
EncodeSeconds(const GpuProfile& gpu, const hilo::AdapterLayout& layout,
              const std::string& compressor, int64_t rank, const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
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
    }
    const double numel = static_cast<double>(layout.numel());
    const double bytes = compressor == "dense" ? 4.0 * numel : 16.0 * numel;
    const double kernels = spar       ? 6.0 * static_cast<double>(layout.size())
                           : powersgd ? 4.0 * static_cast<double>(layout.size())
                                      : 1.0;
    return flops / (gpu.flops_per_s() * options.encode_mfu) +
           bytes / (gpu.mem_bytes_per_s() * options.elementwise_mbu) +
           kernels * options.kernel_launch_s;
}

hilo::StatusOr<double>
DecodeReplaySeconds(const GpuProfile& gpu, int64_t adapter_numel, const std::string& strategy,
                    const ComputeOptions& options)
{
    HILO_RETURN_IF_ERROR(options.Validate());
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
    if (adapter_numel < 0)
    {
        return hilo::Status::InvalidArgument("adapter_numel must be >= 0");
    }
    return static_cast<double>(adapter_numel) * bytes_per_param /
               (gpu.mem_bytes_per_s() * options.elementwise_mbu) +
           3.0 * options.kernel_launch_s;
}

double
AdapterLoadSeconds(const GpuProfile& gpu, int64_t adapter_bytes, const ComputeOptions& options)
{
    return static_cast<double>(adapter_bytes) / (gpu.host_bytes_per_s() * options.host_link_eff) +
           options.adapter_load_overhead_s;
}

} // namespace models
