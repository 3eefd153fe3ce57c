// The batched information-set search (search.h).
#include "search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "observation.h"
#include "rng.h"

namespace island_fortress {
namespace {

// A uniform double in [0, 1) from a SplitMix64 generator.
double Uniform(uint64_t& gen) { return static_cast<double>(rng::NextU64(gen) >> 11) * 0x1.0p-53; }

// The digits a bid of a seat holding `jade` is entered in, after the first (E3; State::BeginBid).
int BidDigits(int64_t jade) {
  int digits = 0;
  while (jade > kMaxBid) {
    jade /= kBidBase;
    ++digits;
  }
  return digits;
}

// Applies the decisions that have one legal action.
void SkipForced(State& world) {
  while (!world.IsTerminal()) {
    const std::vector<int>& legal = world.LegalActions();
    if (legal.size() != 1) return;
    world.ApplyLegalAction(legal[0]);
  }
}

}  // namespace

Search::Search(int threads, const SearchOptions& options) : options_(options), pool_(threads) {
  if (!(options.c_puct >= 0.0) || !(options.exploration > 0.0 && options.exploration <= 1.0) ||
      !(options.bid_threshold >= 0.0 && options.bid_threshold < 1.0))
    throw std::invalid_argument("search options: c_puct >= 0, exploration in (0, 1], bid_threshold in [0, 1)");
  if (options.considered < 1 || !(options.value_scale >= 0.0) || !(options.maxvisit_init >= 0.0) ||
      !(options.gumbel_scale >= 0.0))
    throw std::invalid_argument(
        "search options: considered >= 1, value_scale >= 0, maxvisit_init >= 0, gumbel_scale >= 0");
}

void Search::Begin(const std::vector<const State*>& roots, const uint64_t* seeds, int simulations) {
  if (simulations < 1) throw std::invalid_argument("a search needs at least 1 simulation");
  if (roots.size() > static_cast<size_t>(std::numeric_limits<int>::max() / kMaxPlayers))
    throw std::invalid_argument("too many games for one search");
  for (const State* s : roots) {
    if (!s) throw std::invalid_argument("a search root is missing");
    if (s->IsTerminal()) throw std::invalid_argument("a search root is a finished game");
  }
  trees_.assign(roots.size(), Tree{});
  max_rows_ = 0;
  pending_ = false;
  for (size_t i = 0; i < roots.size(); ++i) {
    const State& s = *roots[i];
    Tree& t = trees_[i];
    t.seat = s.CurrentPlayer();
    t.rng = seeds[i];
    t.left = simulations + 1;  // the root's own evaluation first
    const std::vector<int>& legal = s.LegalActions();
    t.legal = legal;
    if (legal.size() == 1) {
      t.forced = legal[0];
      t.left = 0;
      continue;
    }
    t.rewound = options_.simultaneous_bids && s.decision() == Decision::kPetitionBid && s.order_pos() > 0 &&
                s.bid_digits_left() == BidDigits(s.jade()[static_cast<size_t>(t.seat)]);
    if (t.rewound)
      t.root.emplace(s.BiddingStart());
    else
      t.root.emplace(s, State::kLookAhead);
    if (options_.gumbel) {  // Gumbel(0, 1) noise per root action, and the halving's schedule
      t.gumbel.clear();
      for (size_t a = 0; a < legal.size(); ++a) {
        const double u = std::max(Uniform(t.rng), 1e-300);
        t.gumbel.push_back(options_.gumbel_scale * -std::log(-std::log(u) + 1e-300));
      }
      const int considered = std::min(options_.considered, static_cast<int>(legal.size()));
      t.halving = HalvingSchedule(considered, simulations);
    }
    max_rows_ += s.n();
  }
}

int Search::Leaves(float* obs, uint8_t* mask, int32_t* starts) {
  if (pending_) throw std::logic_error("search: Expand the leaves of the last call first");
  const int n = size();
  bool any = false;
  for (const Tree& t : trees_) any = any || t.left > 0;
  if (!any) return -1;
  pool_.ParallelFor(n, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) Walk(trees_[static_cast<size_t>(i)]);
  });
  int rows = 0;
  for (int i = 0; i < n; ++i) {
    Tree& t = trees_[static_cast<size_t>(i)];
    t.start = rows;
    starts[i] = rows;
    rows += t.rows;
  }
  starts[n] = rows;
  pool_.ParallelFor(n, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) Write(trees_[static_cast<size_t>(i)], obs, mask);
  });
  pending_ = rows > 0;
  return rows;
}

void Search::Expand(const float* logits, const float* values) {
  if (!pending_) throw std::logic_error("search: no leaves to expand");
  pool_.ParallelFor(size(), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) ExpandOne(trees_[static_cast<size_t>(i)], logits, values);
  });
  pending_ = false;
}

void Search::Walk(Tree& t) {
  t.rows = 0;
  t.leaf = -1;
  t.path.clear();
  if (t.left <= 0) return;
  --t.left;
  State world = t.root->RedealUnseen(t.seat, rng::NextU64(t.rng));
  SkipForced(world);
  if (!t.evaluated) {  // the root's node, valued like any leaf
    t.evaluated = true;
    t.leaf = NewNode(t, world, -1);
    t.world.emplace(std::move(world));
    t.rows = t.world->n();
    return;
  }
  int node = 0;
  while (true) {
    std::vector<double> strategy;
    const int edge = Select(t, node, world, strategy);
    t.path.push_back(Step{node, edge, std::move(strategy)});
    world.ApplyLegalAction(t.nodes[static_cast<size_t>(node)].edges[static_cast<size_t>(edge)].action);
    SkipForced(world);
    if (world.IsTerminal()) {
      Backup(t, world.Returns());
      return;
    }
    const int child = Child(t, node, edge, world);
    if (child < 0) {  // a new leaf: valued on Expand
      t.leaf = static_cast<int>(t.nodes.size()) - 1;
      t.world.emplace(std::move(world));
      t.rows = t.world->n();
      return;
    }
    node = child;
  }
}

// A node for the position `world`; a sealed bid's node belongs to the bidding `group` (-1: one
// that begins here).
int Search::NewNode(Tree& t, const State& world, int group) {
  SearchNode node;
  node.player = world.CurrentPlayer();
  node.sealed = options_.simultaneous_bids && world.decision() == Decision::kPetitionBid;
  if (node.sealed) node.group = group >= 0 ? group : static_cast<int>(t.nodes.size());
  for (int a : world.LegalActions()) node.edges.push_back(SearchEdge{a});
  t.nodes.push_back(std::move(node));
  return static_cast<int>(t.nodes.size()) - 1;
}

// The node that `edge` of `parent` leads to in `world` (made if new: then -1, the new node last).
int Search::Child(Tree& t, int parent, int edge, const State& world) {
  SearchNode& from = t.nodes[static_cast<size_t>(parent)];
  if (!from.sealed) {
    const int child = from.edges[static_cast<size_t>(edge)].child;
    if (child >= 0) return child;
    const int made = NewNode(t, world, -1);
    t.nodes[static_cast<size_t>(parent)].edges[static_cast<size_t>(edge)].child = made;
    return -1;
  }
  // Within the bidding: keyed by what the next bidder knows, or by the bids revealed.
  SealedKey key;
  if (world.decision() == Decision::kPetitionBid) {
    const int q = world.CurrentPlayer();
    key.kind = 0;
    key.v = {q, world.bids()[static_cast<size_t>(q)], world.bid_digits_left(), 0};
  } else {
    key.kind = 1;
    key.v = world.last_bids();
  }
  const int group = from.group;
  for (const auto& [k, index] : t.nodes[static_cast<size_t>(group)].keyed)
    if (k == key) return index;
  const int made = NewNode(t, world, group);
  t.nodes[static_cast<size_t>(group)].keyed.emplace_back(key, made);
  return -1;
}

// The edges of `node` legal in `world`, with any legal action the node has not met added (its
// prior: an even share); returns the edge a walk takes.
int Search::Select(Tree& t, int index, const State& world, std::vector<double>& strategy) {
  SearchNode& node = t.nodes[static_cast<size_t>(index)];
  const std::vector<int>& legal = world.LegalActions();
  for (int a : legal) {
    auto it = std::lower_bound(node.edges.begin(), node.edges.end(), a,
                               [](const SearchEdge& e, int action) { return e.action < action; });
    if (it == node.edges.end() || it->action != a) {
      SearchEdge e{a};
      e.prior = 1.0F / static_cast<float>(legal.size());
      node.edges.insert(it, e);
    }
  }
  if (options_.gumbel && !node.sealed) return SelectGumbel(t, index, legal);
  if (node.sealed) {
    SealedStrategy(node.edges, legal, options_.exploration, strategy);
    double x = Uniform(t.rng);
    int last = -1;
    for (size_t e = 0; e < node.edges.size(); ++e) {
      if (strategy[e] <= 0.0) continue;
      last = static_cast<int>(e);
      x -= strategy[e];
      if (x < 0.0) return last;
    }
    return last;
  }
  const double total = std::sqrt(static_cast<double>(node.visits) + 1.0);
  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  size_t k = 0;
  for (size_t e = 0; e < node.edges.size(); ++e) {
    const SearchEdge& edge = node.edges[e];
    while (k < legal.size() && legal[k] < edge.action) ++k;
    if (k == legal.size() || legal[k] != edge.action) continue;
    const double q = edge.visits ? edge.value / edge.visits : 0.0;
    const double score = q + options_.c_puct * edge.prior * total / (1.0 + edge.visits);
    if (score > best_score) {
      best = static_cast<int>(e);
      best_score = score;
    }
  }
  return best;
}

// A bidder's strategy now, one entry per edge (zero where the bid is not among `legal`, sorted):
// regret matching over the positive regrets (the prior while none is positive), a share
// `exploration` spread evenly.
void SealedStrategy(const std::vector<SearchEdge>& edges, const std::vector<int>& legal, double exploration,
                    std::vector<double>& out) {
  out.assign(edges.size(), 0.0);
  double positive = 0.0;
  double prior = 0.0;
  int count = 0;
  size_t k = 0;
  for (size_t e = 0; e < edges.size(); ++e) {
    while (k < legal.size() && legal[k] < edges[e].action) ++k;
    if (k == legal.size() || legal[k] != edges[e].action) continue;
    out[e] = 1.0;  // legal
    ++count;
    positive += std::max(edges[e].regret, 0.0);
    prior += edges[e].prior;
  }
  for (size_t e = 0; e < edges.size(); ++e) {
    if (out[e] == 0.0) continue;
    const double base = positive > 0.0 ? std::max(edges[e].regret, 0.0) / positive
                        : prior > 0.0  ? edges[e].prior / prior
                                       : 1.0 / count;
    out[e] = (1.0 - exploration) * base + exploration / count;
  }
}

// Regret matching's update after one walk through a bidder's node (outcome sampling with a
// baseline, Lanctot et al. 2009's estimator): the walk was worth u to the bidder, b is the node's
// mean value so far; the bid taken is credited (u - b) / sigma(bid) (importance-weighted), every
// legal bid is charged u - b, and regrets are floored at zero (regret matching+). The average
// strategy adds the strategy the bid was drawn from less its exploration, weighted by the node's
// visits (linear averaging: the late, better-informed strategies count more).
void SealedUpdate(std::vector<SearchEdge>& edges, const std::vector<double>& sigma, int taken, double u,
                  double exploration) {
  double total = 0.0;
  int visits = 0;
  int count = 0;
  for (size_t e = 0; e < edges.size(); ++e) {
    total += edges[e].value;
    visits += edges[e].visits;
    count += sigma[e] > 0.0;
  }
  const double gain = u - (visits ? total / visits : 0.0);
  const double weight = static_cast<double>(visits) + 1.0;
  for (size_t e = 0; e < edges.size(); ++e) {
    if (sigma[e] <= 0.0) continue;
    SearchEdge& edge = edges[e];
    const double credit = static_cast<int>(e) == taken ? gain / sigma[e] : 0.0;
    edge.regret = std::max(edge.regret + credit - gain, 0.0);
    const double base = exploration < 1.0 ? (sigma[e] - exploration / count) / (1.0 - exploration) : 1.0 / count;
    edge.strategy += weight * base;
  }
}

void Search::Backup(Tree& t, const std::array<double, kMaxPlayers>& value) {
  for (auto it = t.path.rbegin(); it != t.path.rend(); ++it) {
    SearchNode& node = t.nodes[static_cast<size_t>(it->node)];
    SearchEdge& taken = node.edges[static_cast<size_t>(it->edge)];
    const double u = value[static_cast<size_t>(node.player)];
    if (node.sealed) SealedUpdate(node.edges, it->strategy, it->edge, u, options_.exploration);
    node.visits += 1;
    taken.visits += 1;
    taken.value += u;
  }
  t.path.clear();
}

void Search::Write(Tree& t, float* obs, uint8_t* mask) const {
  if (!t.rows) return;
  const State& world = *t.world;
  const int mover = world.CurrentPlayer();
  for (int p = 0; p < t.rows; ++p) {
    const auto row = static_cast<size_t>(t.start + p);
    EncodeObservation(world, p, obs + row * kObsSize);
    if (p == mover)
      EncodeActionMask(world, mask + row * kNumActions);
    else
      std::memset(mask + row * kNumActions, 1, kNumActions);
  }
}

void Search::ExpandOne(Tree& t, const float* logits, const float* values) {
  if (t.leaf < 0) return;
  SearchNode& node = t.nodes[static_cast<size_t>(t.leaf)];
  // The priors: a softmax of the mover's row over the node's legal actions.
  const float* row = logits + static_cast<size_t>(t.start + node.player) * kNumActions;
  double high = -std::numeric_limits<double>::infinity();
  for (const SearchEdge& e : node.edges) high = std::max(high, static_cast<double>(row[e.action]));
  double sum = 0.0;
  for (const SearchEdge& e : node.edges) sum += std::exp(static_cast<double>(row[e.action]) - high);
  for (SearchEdge& e : node.edges) e.prior = static_cast<float>(std::exp(static_cast<double>(row[e.action]) - high) / sum);
  std::array<double, kMaxPlayers> value{};
  node.raw_value = values[t.start + node.player];
  for (int p = 0; p < t.rows; ++p) value[static_cast<size_t>(p)] = values[t.start + p];
  Backup(t, value);
  t.leaf = -1;
  t.world.reset();
}

// The node of the searching seat's own decision: the root, or (a search from the start of the
// bidding) the seat's node in that round; -1 if no walk reached it.
int Search::Answer(const Tree& t) const {
  if (t.nodes.empty()) return -1;
  const SearchNode& root = t.nodes[0];
  if (!t.rewound || root.player == t.seat) return 0;
  for (const auto& [key, index] : root.keyed)
    if (key.kind == 0 && key.v[0] == t.seat && key.v[1] == 0 && key.v[2] == BidDigits(t.root->jade()[static_cast<size_t>(t.seat)]))
      return index;
  return -1;
}

int64_t Search::Decide(Tree& t, float* policy) const {
  std::memset(policy, 0, sizeof(float) * kNumActions);
  if (t.forced >= 0) {
    policy[t.forced] = 1.0F;
    return t.forced;
  }
  const int answer = Answer(t);
  if (answer < 0) {  // fewer walks than bidders before the seat: an even draw among its bids
    const auto pick = t.legal[static_cast<size_t>(rng::Below(t.rng, t.legal.size()))];
    for (int a : t.legal) policy[a] = 1.0F / static_cast<float>(t.legal.size());
    return pick;
  }
  const SearchNode& node = t.nodes[static_cast<size_t>(answer)];
  if (GumbelRoot(t, answer)) return DecideGumbel(t, node, policy);
  if (node.sealed) {
    double total = 0.0;
    for (const SearchEdge& e : node.edges) total += e.strategy;
    if (total <= 0.0) throw std::logic_error("search: the searching seat's bid was never visited");
    double kept = 0.0;
    double high = 0.0;
    for (const SearchEdge& e : node.edges) {
      policy[e.action] = static_cast<float>(e.strategy / total);
      high = std::max(high, e.strategy / total);
    }
    const double floor = std::min(options_.bid_threshold, high);
    for (const SearchEdge& e : node.edges)
      if (e.strategy / total >= floor) kept += e.strategy / total;
    double x = Uniform(t.rng) * kept;
    int64_t last = -1;
    for (const SearchEdge& e : node.edges) {
      if (e.strategy / total < floor) continue;
      last = e.action;
      x -= e.strategy / total;
      if (x < 0.0) break;
    }
    return last;
  }
  int best = -1;
  for (size_t e = 0; e < node.edges.size(); ++e) {
    const SearchEdge& edge = node.edges[e];
    policy[edge.action] = node.visits ? static_cast<float>(edge.visits) / static_cast<float>(node.visits) : 0.0F;
    if (best < 0 || edge.visits > node.edges[static_cast<size_t>(best)].visits ||
        (edge.visits == node.edges[static_cast<size_t>(best)].visits && edge.prior > node.edges[static_cast<size_t>(best)].prior))
      best = static_cast<int>(e);
  }
  return node.edges[static_cast<size_t>(best)].action;
}

void Search::Result(int64_t* actions, float* policy) {
  if (pending_) throw std::logic_error("search: Expand the leaves of the last call first");
  for (size_t i = 0; i < trees_.size(); ++i) actions[i] = Decide(trees_[i], policy + i * kNumActions);
}

std::pair<std::vector<double>, std::vector<double>> SealedSelfPlay(const std::vector<std::vector<double>>& payoff,
                                                                   int iterations, double exploration, uint64_t seed) {
  if (payoff.empty() || payoff[0].empty()) throw std::invalid_argument("a matrix game needs actions");
  std::array<std::vector<SearchEdge>, 2> edges;
  std::array<std::vector<int>, 2> legal;
  const std::array<size_t, 2> sizes{payoff.size(), payoff[0].size()};
  for (size_t p = 0; p < 2; ++p)
    for (size_t a = 0; a < sizes[p]; ++a) {
      SearchEdge e{static_cast<int>(a)};
      e.prior = static_cast<float>(1.0 / static_cast<double>(sizes[p]));
      edges[p].push_back(e);
      legal[p].push_back(static_cast<int>(a));
    }
  for (const auto& row : payoff)
    if (row.size() != sizes[1]) throw std::invalid_argument("a matrix game's rows are of one length");
  uint64_t gen = seed;
  std::array<std::vector<double>, 2> sigma;
  for (int i = 0; i < iterations; ++i) {
    std::array<int, 2> taken{};
    for (size_t p = 0; p < 2; ++p) {
      SealedStrategy(edges[p], legal[p], exploration, sigma[p]);
      double x = Uniform(gen);
      taken[p] = static_cast<int>(sizes[p]) - 1;
      for (size_t a = 0; a < sizes[p]; ++a) {
        x -= sigma[p][a];
        if (x < 0.0) {
          taken[p] = static_cast<int>(a);
          break;
        }
      }
    }
    const double u = payoff[static_cast<size_t>(taken[0])][static_cast<size_t>(taken[1])];
    const std::array<double, 2> value{u, -u};
    for (size_t p = 0; p < 2; ++p) {
      SealedUpdate(edges[p], sigma[p], taken[p], value[p], exploration);
      edges[p][static_cast<size_t>(taken[p])].visits += 1;
      edges[p][static_cast<size_t>(taken[p])].value += value[p];
    }
  }
  std::array<std::vector<double>, 2> average;
  for (size_t p = 0; p < 2; ++p) {
    double total = 0.0;
    for (const SearchEdge& e : edges[p]) total += e.strategy;
    for (const SearchEdge& e : edges[p]) average[p].push_back(total > 0.0 ? e.strategy / total : 0.0);
  }
  return {average[0], average[1]};
}

}  // namespace island_fortress
