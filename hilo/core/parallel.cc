#include "hilo/core/parallel.h"

namespace hilo
{
namespace
{

// The tally in scope on each thread. Observation only (tests); it never changes what a loop
// computes, so it cannot break the determinism rules.
thread_local ParallelTally* t_current = nullptr;

} // namespace

ParallelTally::ParallelTally()
  : m_outer(t_current)
{
    t_current = this;
}

ParallelTally::~ParallelTally()
{
    t_current = m_outer;
}

int
ParallelTally::threads() const
{
    std::lock_guard<std::mutex> lock(m_mu);
    return static_cast<int>(m_threads.size());
}

int64_t
ParallelTally::chunks() const
{
    std::lock_guard<std::mutex> lock(m_mu);
    return m_chunks;
}

void
ParallelTally::Record()
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_threads.insert(std::this_thread::get_id());
    ++m_chunks;
}

ParallelTally*
ParallelTally::Current()
{
    return t_current;
}

} // namespace hilo
