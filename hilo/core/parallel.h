// hilo's parallel loops: ATen's intra-op thread pool (OpenMP in Debian's LibTorch) behind one
// function, plus an observer that lets tests prove a loop really ran on more than one thread.
//
// Every loop run this way must give results that do not depend on how [begin, end) is split
// (replicas must replay bit for bit on any machine): each element is computed by one fixed-order
// expression, and any reduction combines per-part results in an order fixed by the data, never by
// the thread count.
#ifndef HILO_CORE_PARALLEL_H
#define HILO_CORE_PARALLEL_H

#include <ATen/Parallel.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

namespace hilo
{

/// Records the threads that execute chunks of the hilo::ParallelFor loops started on the thread
/// that constructed it, for as long as it lives. Instrumentation only: a loop computes the same
/// values with or without a tally. Tallies nest (the innermost one records); construct and
/// destroy on the same thread.
class ParallelTally
{
  public:
    ParallelTally();
    ~ParallelTally();
    ParallelTally(const ParallelTally&) = delete;
    ParallelTally& operator=(const ParallelTally&) = delete;

    /// Distinct OS threads that ran at least one chunk.
    int threads() const;
    /// Chunks run (a loop that did not split counts one).
    int64_t chunks() const;

    /// Called by ParallelFor from inside each chunk.
    void Record();

    /// The tally in scope on the calling thread, or nullptr.
    static ParallelTally* Current();

  private:
    mutable std::mutex m_mu;
    std::set<std::thread::id> m_threads;
    int64_t m_chunks{0};
    ParallelTally* m_outer;
};

/// Runs f(b, e) on disjoint chunks that cover [begin, end), on up to at::get_num_threads()
/// threads; at most one chunk per thread, and no split when end - begin <= grain or when called
/// from inside another parallel region (at::parallel_for's rules).
template<typename F>
void
ParallelFor(int64_t begin, int64_t end, int64_t grain, const F& f)
{
    ParallelTally* tally = ParallelTally::Current();
    if (tally == nullptr)
    {
        at::parallel_for(begin, end, grain, f);
        return;
    }
    at::parallel_for(begin, end, grain,
                     [&](int64_t b, int64_t e)
                     {
                         tally->Record();
                         f(b, e);
                     });
}

} // namespace hilo

#endif // HILO_CORE_PARALLEL_H
