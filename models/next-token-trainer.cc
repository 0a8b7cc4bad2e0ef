#include "models/next-token-trainer.h"

#include <cmath>

namespace models
{
namespace
{

at::Tensor
CrossEntropy(const TinyLm& lm, const at::Tensor& tokens)
{
    const int64_t t = tokens.size(1);
    at::Tensor logits = lm.Forward(tokens.narrow(1, 0, t - 1), at::Tensor());
    at::Tensor logp = at::log_softmax(logits, -1);
    at::Tensor target = tokens.narrow(1, 1, t - 1).unsqueeze(-1);
    return -logp.gather(-1, target).mean();
}

} // namespace

double
NextTokenLoss(const TinyLm& lm, const at::Tensor& tokens)
{
    at::NoGradGuard no_grad;
    return CrossEntropy(lm, tokens).item<double>();
}

std::vector<double>
TrainNextToken(const TinyLm& lm, const std::function<at::Tensor(int64_t step)>& batch,
               const NextTokenTrainerOptions& options)
{
    std::vector<at::Tensor> params;
    for (auto& [name, w] : lm.BaseWeights())
    {
        params.push_back(w);
    }
    std::vector<at::Tensor> m1;
    std::vector<at::Tensor> m2;
    for (at::Tensor& p : params)
    {
        p.requires_grad_(true);
        m1.push_back(at::zeros_like(p));
        m2.push_back(at::zeros_like(p));
    }
    const double beta1 = 0.9;
    const double beta2 = 0.999;
    const double eps = 1e-8;
    std::vector<double> losses;
    for (int64_t step = 0; step < options.steps; ++step)
    {
        double lr = options.lr;
        if (step < options.warmup_steps)
        {
            lr *= static_cast<double>(step + 1) / static_cast<double>(options.warmup_steps);
        }
        else
        {
            const double span = std::max<int64_t>(1, options.steps - options.warmup_steps);
            const double progress = static_cast<double>(step - options.warmup_steps) / span;
            lr *= 0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * progress));
        }
        for (at::Tensor& p : params)
        {
            if (p.grad().defined())
            {
                p.mutable_grad().zero_();
            }
        }
        at::Tensor loss = CrossEntropy(lm, batch(step));
        loss.backward();
        losses.push_back(loss.item<double>());

        at::NoGradGuard no_grad;
        double sq = 0;
        for (at::Tensor& p : params)
        {
            sq += p.grad().to(at::kDouble).pow(2).sum().item<double>();
        }
        const double norm = std::sqrt(sq);
        const double scale =
            options.clip_norm > 0 && norm > options.clip_norm ? options.clip_norm / norm : 1.0;
        const double bc1 = 1.0 - std::pow(beta1, double(step + 1));
        const double bc2 = 1.0 - std::pow(beta2, double(step + 1));
        for (size_t i = 0; i < params.size(); ++i)
        {
            at::Tensor g = params[i].grad() * scale;
            m1[i].mul_(beta1).add_(g, 1.0 - beta1);
            m2[i].mul_(beta2).addcmul_(g, g, 1.0 - beta2);
            at::Tensor denom = (m2[i] / bc2).sqrt_().add_(eps);
            if (options.weight_decay > 0)
            {
                params[i].mul_(1.0 - lr * options.weight_decay);
            }
            params[i].addcdiv_(m1[i], denom, -lr / bc1);
        }
    }
    for (at::Tensor& p : params)
    {
        p.mutable_grad() = at::Tensor();
        p.requires_grad_(false);
    }
    return losses;
}

} // namespace models
