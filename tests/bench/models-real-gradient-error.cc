// Compressors on REAL gradients: the paper distillation workload (width 256, LoRA rank 64) trained
// for a few steps with full-state AdamW through hilo; at the measured step, every compressor of
// the report encodes the real gradient at 1.6%, 5% and 10% of the adapter's bytes, and the
// relative reconstruction error is printed. Also writes the energy captured by the top-k singular
// triplets of the gradient and of the AdamW update of that step (does the gradient compress
// better than the update?). Not run by CTest.
//   build/tests/models-real-gradient-error [STEPS [SPECTRA_CSV]] > real-gradient-error.csv
//   (spectra default: results/compressors/gradient-vs-update-spectra.csv)
#include "hilo/compress/compressor-factory.h"
#include "hilo/optim/replay.h"
#include "models/workload.h"
#include "tests/bench/hilo-compress-fixture.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <fstream>

namespace
{

// Mean over matrices of the fraction of squared Frobenius norm in the top-k singular values.
std::vector<double>
TopKEnergy(const hilo::AdapterLayout& layout, const std::vector<float>& x, int64_t max_k)
{
    std::vector<double> energy(static_cast<size_t>(max_k), 0.0);
    int counted = 0;
    for (size_t m = 0; m < layout.size(); ++m)
    {
        const hilo::MatrixSpec& s = layout.matrix(m);
        at::Tensor t = at::from_blob(const_cast<float*>(x.data() + layout.offset(m)),
                                     {s.rows, s.cols}, at::kFloat)
                           .to(at::kDouble);
        at::Tensor sv = at::linalg_svdvals(t);
        const double total = (sv * sv).sum().item<double>();
        if (total <= 0)
            continue;
        ++counted;
        double acc = 0;
        for (int64_t k = 0; k < max_k; ++k)
        {
            if (k < sv.size(0))
                acc += sv[k].item<double>() * sv[k].item<double>();
            energy[k] += acc / total;
        }
    }
    for (double& e : energy)
        e /= std::max(1, counted);
    return energy;
}

} // namespace

int
main(int argc, char** argv)
{
    const int warm_steps = argc > 1 ? std::atoi(argv[1]) : 10;
    const std::string spectra_path =
        argc > 2 ? argv[2] : "results/compressors/gradient-vs-update-spectra.csv";
    models::WorkloadConfig config = models::PaperWorkloadConfig("distill");
    auto workload = models::Workload::Create(config).value();
    const hilo::AdapterLayout& layout = workload->layout();
    hilo::OptimizerConfig opt;
    opt.lr.base_lr = 3e-3f;
    hilo::ReplicatedState state;
    state.adapter = workload->InitialAdapter();
    state.optimizer = hilo::NewOptimizerState(opt, layout.numel());
    std::vector<float> grad;
    std::vector<float> before;
    for (int step = 1; step <= warm_steps + 1; ++step)
    {
        std::vector<std::string> batches;
        for (uint32_t w = 0; w < 2; ++w)
        {
            models::RolloutInfo info;
            batches.push_back(workload->Rollout(state.adapter.theta, step, w, &info).value());
        }
        models::GradientInfo info;
        grad = workload->Gradient(state.adapter.theta, batches, &info).value();
        before = state.adapter.theta;
        hilo::ReplayStep(opt, state, grad, &state);
        std::fprintf(stderr, "step %d loss %.4f\n", step, info.loss);
    }
    // grad: the gradient of the last step; update: the AdamW step it produced.
    std::vector<float> update(before.size());
    for (size_t i = 0; i < update.size(); ++i)
        update[i] = state.adapter.theta[i] - before[i];

    std::printf("# command: build/tests/models-real-gradient-error %d  (paper distill workload: "
                "d_model %lld, rank %lld, %zu matrices, %lld params; gradient of step %d)\n",
                warm_steps, static_cast<long long>(config.d_model),
                static_cast<long long>(config.lora_rank), layout.size(),
                static_cast<long long>(layout.numel()), warm_steps + 1);
    std::printf("label,kind,options,budget_fraction,payload_bytes,rel_error_gradient,"
                "rel_error_update,status\n");
    std::vector<float> out;
    for (const hilo::bench::Arm& a : hilo::bench::ReportArms())
    {
        for (double fraction : {0.016, 0.05, 0.10})
        {
            const int64_t budget =
                static_cast<int64_t>(fraction * static_cast<double>(layout.adapter_bytes()));
            double err[2] = {0, 0};
            int64_t bytes = 0;
            std::string status = "ok";
            const std::vector<float>* inputs[2] = {&grad, &update};
            for (int i = 0; i < 2; ++i)
            {
                auto c =
                    hilo::NewCompressor(a.kind, layout, *hilo::ParseCompressorOptions(a.options))
                        .value();
                auto e = c->Encode(*inputs[i], budget);
                if (!e.ok())
                {
                    status = e.status().ToString();
                    break;
                }
                bytes = static_cast<int64_t>(e->payload.size());
                (void) c->Decode(e->payload, &out);
                err[i] = hilo::bench::RelativeL2Error(out, *inputs[i]);
            }
            std::printf("%s,%s,%s,%.3f,%lld,%.5f,%.5f,\"%s\"\n", a.label, a.kind, a.options,
                        fraction, static_cast<long long>(bytes), err[0], err[1], status.c_str());
        }
    }
    const std::vector<double> eg = TopKEnergy(layout, grad, config.lora_rank);
    const std::vector<double> eu = TopKEnergy(layout, update, config.lora_rank);
    std::ofstream spectra(spectra_path);
    spectra << "# command: build/tests/models-real-gradient-error " << warm_steps
            << " (mean over matrices of the energy fraction in the top-k singular values)\n";
    spectra << "k,energy_gradient,energy_update\n";
    for (size_t k = 0; k < eg.size(); ++k)
        spectra << (k + 1) << ',' << eg[k] << ',' << eu[k] << '\n';
    return 0;
}
