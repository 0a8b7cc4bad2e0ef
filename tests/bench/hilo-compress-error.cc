// Reconstruction error of every compressor at 1.6%, 5% and 10% of the adapter's bytes on the
// 7B-rank-64-shaped synthetic gradient (hilo-compress-fixture.h). Writes CSV to stdout:
//   build/tests/hilo-compress-error > results/compressors/reconstruction-error.csv
// Arguments, optional: labels of the arms to run (default: all of them).
// Single-shot timings are included for orientation only; hilo-compress-bench measures them.
#include "hilo/compress/compressor-factory.h"
#include "tests/bench/hilo-compress-fixture.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace
{

double
Now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

int
main(int argc, char** argv)
{
    using namespace hilo;
    at::set_num_threads(2);
    const AdapterLayout layout = bench::Qwen7BLoraLayout();
    std::fprintf(stderr, "layout: %zu matrices, %lld params; generating gradient...\n",
                 layout.size(), static_cast<long long>(layout.numel()));
    const std::vector<float> x = bench::SyntheticLoraGradient(layout, 2024);
    std::printf("# command: build/tests/hilo-compress-error (2 threads); gradient: "
                "tests/bench/hilo-compress-fixture.h seed 2024\n");
    std::printf("label,kind,options,budget_fraction,budget_bytes,payload_bytes,payload_fraction,"
                "rel_error,mean_kept,encode_s,decode_s,status\n");
    std::vector<float> out;
    struct Row
    {
        std::string label;
        const bench::Arm* arm;
        int warm; // extra encodes of the same X before the measured one (warm starts)
    };
    std::vector<Row> rows;
    const std::vector<std::string> only(argv + 1, argv + argc);
    for (const bench::Arm& a : bench::ReportArms())
    {
        if (!only.empty() && std::find(only.begin(), only.end(), a.label) == only.end())
            continue;
        rows.push_back({a.label, &a, 0});
        // Encoders that warm-start from their previous encode: also after 4 of them.
        if (std::string(a.kind) == "powersgd" ||
            std::string(a.options).find("warm=true") != std::string::npos)
            rows.push_back({std::string(a.label) + "-warm4", &a, 4});
    }
    for (const Row& row : rows)
    {
        for (double fraction : {0.016, 0.05, 0.10, 0.0})
        {
            const bool own_size = fraction == 0.0; // quant only: at its fixed payload size
            if (own_size != (std::string(row.arm->kind) == "quant"))
            {
                if (own_size)
                    continue;
            }
            auto c = NewCompressor(row.arm->kind, layout, *ParseCompressorOptions(row.arm->options))
                         .value();
            const int64_t budget =
                own_size
                    ? c->MinPayloadBytes()
                    : static_cast<int64_t>(fraction * static_cast<double>(layout.adapter_bytes()));
            for (int w = 0; w < row.warm; ++w)
                (void) c->Encode(x, budget);
            const double t0 = Now();
            StatusOr<Encoded> e = c->Encode(x, budget);
            const double t1 = Now();
            if (!e.ok())
            {
                std::printf("%s,%s,%s,%.4f,%lld,%lld,%.5f,,,,,\"%s\"\n", row.label.c_str(),
                            row.arm->kind, row.arm->options, fraction,
                            static_cast<long long>(budget),
                            static_cast<long long>(c->MinPayloadBytes()),
                            static_cast<double>(c->MinPayloadBytes()) / layout.adapter_bytes(),
                            e.status().ToString().c_str());
                std::fflush(stdout);
                continue;
            }
            Status s = c->Decode(e->payload, &out);
            const double t2 = Now();
            double kept = 0;
            for (int64_t k : e->kept_per_matrix)
                kept += static_cast<double>(k);
            kept = e->kept_per_matrix.empty() ? 0 : kept / e->kept_per_matrix.size();
            std::printf("%s,%s,%s,%.4f,%lld,%zu,%.5f,%.5f,%.2f,%.3f,%.3f,%s\n", row.label.c_str(),
                        row.arm->kind, row.arm->options,
                        own_size ? static_cast<double>(e->payload.size()) / layout.adapter_bytes()
                                 : fraction,
                        static_cast<long long>(budget), e->payload.size(),
                        static_cast<double>(e->payload.size()) / layout.adapter_bytes(),
                        bench::RelativeL2Error(out, x), kept, t1 - t0, t2 - t1,
                        s.ok() ? "ok" : s.ToString().c_str());
            std::fflush(stdout);
        }
    }
    return 0;
}
