// A learner publishing hilo + dense updates of the small test layout (ring of 8 updates, a
// snapshot every 4), the setting the replica tests drive replicas against.
#ifndef HILO_TESTS_HILO_DENSE_HILO_FIXTURE_H
#define HILO_TESTS_HILO_DENSE_HILO_FIXTURE_H

#include "hilo/sync/publisher.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace hilo::testing
{

class DenseHiloFixture : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        layout = SmallLayout();
        spec.kind = SyncKind::kHilo;
        spec.compressor = "dense";
        init = InitialState(layout, 1);
        publisher = NewPublisher();
    }

    /// A publisher of its own, from the same initial state.
    std::unique_ptr<Publisher> NewPublisher() const
    {
        return Publisher::Create(spec, layout, opt, init,
                                 PublisherOptions{/*ring_capacity=*/8, /*snapshot_interval=*/4})
            .value();
    }

    /// One step of `p` on a gradient drawn from `rng`.
    PublishedUpdate Publish(Publisher* p, SplitMix* rng)
    {
        FillGradient(layout, rng, &grad);
        return p->Step(grad).value();
    }

    AdapterLayout layout;
    SyncSpec spec;
    OptimizerConfig opt;
    AdapterState init;
    std::unique_ptr<Publisher> publisher;
    std::vector<float> grad;
};

} // namespace hilo::testing

#endif // HILO_TESTS_HILO_DENSE_HILO_FIXTURE_H
