// A batched information-set search: one tree per game for a batch of games, the simulations of
// every tree advanced in lockstep (the shape of DeepMind's mctx and pgx's AlphaZero). The caller
// owns the network: Leaves() walks every tree to a new leaf in C++ (threads, no GIL) and writes
// the leaves' observation and mask rows into one array; the caller values them with one network
// call and hands the logits and values back to Expand(), which grows the trees and backs the
// values up. Result() gives each tree's move and its policy at the root.
//
// Each tree is single-observer information-set MCTS for the seat to move at its root: every
// simulation starts from a determinisation of the root (State::RedealUnseen: whatever the seat
// cannot see is drawn again, so the search never reads it) and walks the shared tree along the
// actions legal in that copy. Decisions with one legal action are applied without a node.
//
// With `simultaneous_bids`, the sealed petition bids (docs/RULES.md C13, E3) are one simultaneous node: within a round's
// bidding every bidder's node is keyed by what that bidder knows (its seat and its own partial
// bid), never by the bids sealed before it, so no seat plans against a seat that read its bid
// (decoupled simultaneous-move MCTS); the positions after the reveal are keyed by the bids
// revealed. A bidder picks by regret matching with exploration (Lisy, Kovarik, Lanctot and
// Bosansky 2013), starting from the policy's prior, and the searching seat's bid is drawn from
// its node's average strategy, thresholded. A search that starts at a bid after other seats have
// sealed theirs starts from the beginning of that round's bidding (the bids already sealed tell
// the seat nothing), so those seats' bids come from their own regret-matching strategies, not a
// uniform guess. Elsewhere a node picks by PUCT from its player's point of view and the move
// played is the root's most visited action. Without it (the default) a bid is searched by PUCT like
// any decision, the bids sealed before the searcher's drawn again by RedealUnseen: regret
// matching needs thousands of walks a node to settle, and at 16-256 simulations a decision its
// average strategy is still mostly noise (see docs/STRENGTH.md).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "batch.h"
#include "state.h"

namespace island_fortress {

struct SearchOptions {
  double c_puct = 1.5;          // PUCT's exploration weight
  double exploration = 0.1;     // the share of a bidder's strategy spread evenly over its bids
  double bid_threshold = 0.05;  // the searching seat's bid is drawn among bids of this average share
  bool simultaneous_bids = false;  // the sealed bids as one simultaneous node (else PUCT, as elsewhere)
  // Gumbel root selection (Danihelka, Guez, Schrittwieser and Silver, ICLR 2022, as DeepMind's
  // mctx plays it) instead of PUCT: the root samples `considered` actions without replacement by
  // Gumbel-top-k over the priors and shares the simulations among them by sequential halving,
  // the survivors ranked by gumbel + logit + sigma(completed Q); other nodes pick the action that
  // most lags the improved policy softmax(logit + sigma(completed Q)) in visits; the move is the
  // survivor of the halving and the policy the root's improved policy. sigma(q) = (maxvisit_init
  // + the most visits of an edge) * value_scale * q, the completed Q-values min-max rescaled, an
  // unvisited action's Q the node's value mixed with its visited actions' (mctx's defaults).
  bool gumbel = false;
  int considered = 16;
  double gumbel_scale = 1.0;  // the noise's scale: 1 samples as mctx does, 0 ranks by the policy alone
  double value_scale = 0.1;
  double maxvisit_init = 50.0;
};

// What one decision of a tree returns: its move, and the search's policy over the actions at
// the searching seat's decision (visit shares, or the bid's average strategy).
struct SearchEdge {
  int action = 0;
  float prior = 0.0F;
  int child = -1;         // the node this action leads to (-1: none yet, or keyed: see SearchNode)
  int visits = 0;
  double value = 0.0;     // summed values of the walks through it, for the node's player
  double regret = 0.0;    // sealed bids: cumulative regret of not bidding this
  double strategy = 0.0;  // sealed bids: summed probability of bidding this (the average strategy)
};

// The key of a node reached within a round's bidding: a bidder's node (kind 0: its seat, its own
// partial bid and the digits it still enters) or the position after the reveal (kind 1: the bids).
struct SealedKey {
  int kind = 0;
  std::array<int64_t, kMaxPlayers> v{};
  bool operator==(const SealedKey& o) const { return kind == o.kind && v == o.v; }
};

struct SearchNode {
  int player = 0;
  double raw_value = 0.0;  // the network's value of the node's first position, for its player
  bool sealed = false;  // a sealed petition bid
  int group = -1;       // sealed: the node where this round's bidding began (it keeps `keyed`)
  int visits = 0;
  std::vector<SearchEdge> edges;                  // sorted by action
  std::vector<std::pair<SealedKey, int>> keyed;   // group nodes: the round's nodes by their key
};

class Search {
 public:
  Search(int threads, const SearchOptions& options);

  // Held around every call by the caller (as Batch::mutex()): one call at a time.
  std::mutex& mutex() const { return mutex_; }
  bool started() const { return true; }

  // One tree per root (not null), searched for the seat to move there, `simulations` walks each,
  // its draws from the SplitMix64 generator seeded by seeds[i]. A finished root is an error.
  void Begin(const std::vector<const State*>& roots, const uint64_t* seeds, int simulations);
  int size() const { return static_cast<int>(trees_.size()); }
  // The most rows one Leaves call writes: every tree's table size (one row per seat of a leaf:
  // the network's values are each seat's own expected return, which need not sum to zero).
  int max_rows() const { return max_rows_; }
  // Walks every tree that has simulations left to a new leaf (a walk that ends the game is backed
  // up at once) and writes one row per seat of each leaf, in seat order: obs[r][kObsSize],
  // mask[r][kNumActions] (the player to move's legal actions in its own row, all ones in the
  // others), and starts[i],
  // tree i's first row (starts[N]: the row count). Returns the rows written, or -1 when every
  // tree is done. Expand must follow a call that wrote rows.
  int Leaves(float* obs, uint8_t* mask, int32_t* starts);
  // The network's output for the rows of the last Leaves call: logits (or log-probabilities)
  // logits[r][kNumActions] and each row's value for its seat, values[r].
  void Expand(const float* logits, const float* values);
  // Each tree's move (actions[N]) and its policy (policy[N][kNumActions]: zeros but at the
  // searching seat's legal actions).
  void Result(int64_t* actions, float* policy);
  // The number of nodes in tree i (for tests).
  int nodes(int i) const { return static_cast<int>(trees_[static_cast<size_t>(i)].nodes.size()); }

 private:
  struct Step {
    int node;
    int edge;
    std::vector<double> strategy;  // sealed bids: the strategy the bid was drawn from, per edge
  };
  struct Tree {
    std::optional<State> root;  // the position every determinisation is drawn from
    int seat = 0;               // the searching seat
    uint64_t rng = 0;           // SplitMix64: the determinisations and the bidders' draws
    int left = 0;               // simulations still to walk (the root's evaluation first)
    bool evaluated = false;     // the root node exists
    int forced = -1;            // the one legal action at the root (no search), else -1
    std::vector<int> legal;     // the searching seat's legal actions at the root
    bool rewound = false;       // the root is the start of the round's bidding (see the file doc)
    std::vector<SearchNode> nodes;
    std::vector<Step> path;          // the walk awaiting its leaf's value
    int leaf = -1;                   // the node awaiting its evaluation, else -1
    std::optional<State> world;      // the leaf's position
    int rows = 0;                    // rows written for the leaf on the last Leaves call
    int start = 0;                   // its first row
    std::vector<double> gumbel;      // Gumbel root selection: each of `legal`'s noise
    std::vector<int> halving;        // its visits of the considered actions, by simulation
  };

  void Walk(Tree& t);
  int Select(Tree& t, int node, const State& world, std::vector<double>& strategy);
  int Child(Tree& t, int parent, int edge, const State& world);
  int NewNode(Tree& t, const State& world, int group);
  void Backup(Tree& t, const std::array<double, kMaxPlayers>& value);
  void Write(Tree& t, float* obs, uint8_t* mask) const;
  void ExpandOne(Tree& t, const float* logits, const float* values);
  int Answer(const Tree& t) const;
  bool GumbelRoot(const Tree& t, int node) const;
  void CompletedQ(const SearchNode& node, std::vector<double>& out) const;
  double RootScore(const Tree& t, const SearchNode& node, size_t edge, const std::vector<double>& sigma_q,
                   int considered_visits) const;
  int SelectGumbel(const Tree& t, int index, const std::vector<int>& legal) const;
  int64_t DecideGumbel(const Tree& t, const SearchNode& node, float* policy) const;
  int64_t Decide(Tree& t, float* policy) const;

  SearchOptions options_;
  std::vector<Tree> trees_;
  int max_rows_ = 0;
  bool pending_ = false;  // Leaves wrote rows that Expand has not taken
  mutable std::mutex mutex_;
  ThreadPool pool_;
};

// The rule of a bidder's node (search.cpp): its strategy now, and its update after a walk that
// took edge `taken` and was worth `u` to it (before the edge's visits and value count the walk).
void SealedStrategy(const std::vector<SearchEdge>& edges, const std::vector<int>& legal, double exploration,
                    std::vector<double>& out);
void SealedUpdate(std::vector<SearchEdge>& edges, const std::vector<double>& sigma, int taken, double u,
                  double exploration);
// Sequential halving's schedule (mctx's get_sequence_of_considered_visits): at simulation k the
// root visits a considered action that has out[k] visits.
std::vector<int> HalvingSchedule(int considered, int simulations);
// The same rule played by both players of a two-player zero-sum matrix game (`payoff`: the row
// player's), `iterations` simultaneous draws: the two average strategies (a test of the rule on a
// game whose equilibrium is known).
std::pair<std::vector<double>, std::vector<double>> SealedSelfPlay(const std::vector<std::vector<double>>& payoff,
                                                                   int iterations, double exploration, uint64_t seed);

}  // namespace island_fortress
