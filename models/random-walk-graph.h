// RandomWalkGraph: the shortest-path task of trlX's "randomwalks" example (CarperAI/trlx,
// examples/randomwalks/randomwalks.py), rebuilt on SeededRng. A directed graph of `nodes` nodes,
// each edge i -> j (i != j) present with probability p_edge, redrawn until every node has an
// out-edge; node 0 is the goal, whose only edge is a self-loop. A policy starts at a node and
// emits the nodes it walks through; a walk of at most `max_length` nodes (start included) is
// scored by its optimality
//   (max_length - length) / (max_length - shortest)
// where length counts the nodes up to and including the first visit of the goal, and a walk that
// leaves the graph (a token >= nodes or a missing edge) or does not reach the goal counts as
// max_length (score 0). The shortest walk scores 1. The graph differs from trlX's for the same
// seed (trlX draws with NumPy); the task, the reward and the defaults (21 nodes, p_edge 0.1,
// max_length 10, graph seed 1002) are the same.
#ifndef MODELS_RANDOM_WALK_GRAPH_H
#define MODELS_RANDOM_WALK_GRAPH_H

#include "models/seeded-rng.h"

#include <cstdint>
#include <vector>

namespace models
{

class RandomWalkGraph
{
  public:
    static constexpr int64_t kGoal = 0;

    /// REQUIRES: nodes >= 2, 0 < p_edge <= 1, max_length >= 2.
    RandomWalkGraph(int64_t nodes, double p_edge, int64_t max_length, uint64_t seed);

    int64_t nodes() const { return m_nodes; }
    int64_t max_length() const { return m_max_length; }
    bool Edge(int64_t from, int64_t to) const { return m_adj[from * m_nodes + to] != 0; }

    /// Nodes on a shortest walk from `start` to the goal, both ends included (1 for the goal),
    /// or -1 when the goal is unreachable.
    int64_t Shortest(int64_t start) const { return m_shortest[start]; }

    /// The start nodes of the task: every non-goal node whose shortest walk has fewer than
    /// max_length nodes (so that its optimality is defined), in increasing order.
    const std::vector<int64_t>& starts() const { return m_starts; }

    /// Optimality in [0, 1] of `walk` (walk[0] is the start, `len` >= 1 entries, only the first
    /// max_length considered). REQUIRES: walk[0] is one of starts().
    double Optimality(const int64_t* walk, int64_t len) const;

    /// A uniform random walk from `start` of exactly `len` nodes: each step picks a uniform
    /// out-neighbour (the goal loops on itself), the pretraining data of the task's base.
    std::vector<int64_t> SampleWalk(int64_t start, int64_t len, SeededRng* rng) const;

    /// One shortest walk from `start` (the optimum), or {} when unreachable.
    std::vector<int64_t> ShortestWalk(int64_t start) const;

  private:
    int64_t m_nodes;
    int64_t m_max_length;
    std::vector<uint8_t> m_adj;      // row-major nodes x nodes
    std::vector<int64_t> m_shortest; // per node
    std::vector<int64_t> m_next;     // per node: next node on one shortest walk (-1: none)
    std::vector<int64_t> m_starts;
};

} // namespace models

#endif // MODELS_RANDOM_WALK_GRAPH_H
