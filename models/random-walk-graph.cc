#include "models/random-walk-graph.h"

#include <algorithm>

namespace models
{

RandomWalkGraph::RandomWalkGraph(int64_t nodes, double p_edge, int64_t max_length, uint64_t seed)
  : m_nodes(nodes)
  , m_max_length(max_length)
{
    SeededRng rng(seed);
    const size_t n = static_cast<size_t>(nodes);
    for (;;)
    {
        m_adj.assign(n * n, 0);
        for (int64_t i = 0; i < nodes; ++i)
        {
            for (int64_t j = 0; j < nodes; ++j)
            {
                const bool edge = rng.Uniform() < p_edge;
                m_adj[i * nodes + j] = edge && i != j ? 1 : 0;
            }
        }
        bool every_row = true;
        for (int64_t i = 0; i < nodes && every_row; ++i)
        {
            every_row = std::any_of(m_adj.begin() + i * nodes, m_adj.begin() + (i + 1) * nodes,
                                    [](uint8_t e) { return e != 0; });
        }
        if (every_row)
        {
            break;
        }
    }
    std::fill(m_adj.begin() + kGoal * nodes, m_adj.begin() + (kGoal + 1) * nodes, 0);
    m_adj[kGoal * nodes + kGoal] = 1;

    // Breadth-first search backwards from the goal.
    m_shortest.assign(n, -1);
    m_next.assign(n, -1);
    m_shortest[kGoal] = 1;
    std::vector<int64_t> frontier{kGoal};
    while (!frontier.empty())
    {
        std::vector<int64_t> next;
        for (int64_t to : frontier)
        {
            for (int64_t from = 0; from < nodes; ++from)
            {
                if (m_shortest[from] < 0 && Edge(from, to))
                {
                    m_shortest[from] = m_shortest[to] + 1;
                    m_next[from] = to;
                    next.push_back(from);
                }
            }
        }
        frontier = std::move(next);
    }
    for (int64_t s = 0; s < nodes; ++s)
    {
        if (s != kGoal && m_shortest[s] > 0 && m_shortest[s] < max_length)
        {
            m_starts.push_back(s);
        }
    }
}

double
RandomWalkGraph::Optimality(const int64_t* walk, int64_t len) const
{
    const int64_t considered = std::min(len, m_max_length);
    int64_t length = m_max_length; // no goal within max_length, or an invalid step
    for (int64_t i = 0; i < considered; ++i)
    {
        if (walk[i] < 0 || walk[i] >= m_nodes || (i > 0 && !Edge(walk[i - 1], walk[i])))
        {
            break;
        }
        if (walk[i] == kGoal)
        {
            length = i + 1;
            break;
        }
    }
    const int64_t best = m_shortest[walk[0]];
    return static_cast<double>(m_max_length - length) / static_cast<double>(m_max_length - best);
}

std::vector<int64_t>
RandomWalkGraph::SampleWalk(int64_t start, int64_t len, SeededRng* rng) const
{
    std::vector<int64_t> walk{start};
    std::vector<int64_t> out;
    while (static_cast<int64_t>(walk.size()) < len)
    {
        const int64_t at = walk.back();
        out.clear();
        for (int64_t j = 0; j < m_nodes; ++j)
        {
            if (Edge(at, j))
            {
                out.push_back(j);
            }
        }
        walk.push_back(out[rng->Below(out.size())]);
    }
    return walk;
}

std::vector<int64_t>
RandomWalkGraph::ShortestWalk(int64_t start) const
{
    if (m_shortest[start] < 0)
    {
        return {};
    }
    std::vector<int64_t> walk{start};
    while (walk.back() != kGoal)
    {
        walk.push_back(m_next[walk.back()]);
    }
    return walk;
}

} // namespace models
