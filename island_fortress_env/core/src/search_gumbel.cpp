// Gumbel root selection and the completed Q-values (search.h's SearchOptions::gumbel): mctx's
// gumbel_muzero_policy in the batched search's trees.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "search.h"

namespace island_fortress {
namespace {

// An edge's prior as a logit (the priors are a softmax of the network's logits).
double Logit(const SearchEdge& e) { return std::log(std::max(static_cast<double>(e.prior), 1e-30)); }

}  // namespace

std::vector<int> HalvingSchedule(int considered, int simulations) {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(simulations));
  if (considered <= 1) {
    for (int k = 0; k < simulations; ++k) out.push_back(k);
    return out;
  }
  const int log2max = static_cast<int>(std::ceil(std::log2(static_cast<double>(considered))));
  std::vector<int> visits(static_cast<size_t>(considered), 0);
  int num = considered;
  while (static_cast<int>(out.size()) < simulations) {
    const int extra = std::max(1, static_cast<int>(static_cast<double>(simulations) / (log2max * num)));
    for (int r = 0; r < extra; ++r) {
      for (int i = 0; i < num; ++i) out.push_back(visits[static_cast<size_t>(i)]);
      for (int i = 0; i < num; ++i) ++visits[static_cast<size_t>(i)];
    }
    num = std::max(2, num / 2);
  }
  out.resize(static_cast<size_t>(simulations));
  return out;
}

// Whether `node` is chosen by Gumbel root selection: the searching seat's own root decision.
bool Search::GumbelRoot(const Tree& t, int node) const {
  if (!options_.gumbel || node != 0 || t.gumbel.empty()) return false;
  const SearchNode& root = t.nodes[0];
  return !root.sealed && root.player == t.seat;
}

// sigma(completed Q) of every edge of `node` (search.h; mctx's qtransform_completed_by_mix_value).
void Search::CompletedQ(const SearchNode& node, std::vector<double>& out) const {
  out.assign(node.edges.size(), 0.0);
  int visits = 0;
  int most = 0;
  double probs = 0.0;
  for (const SearchEdge& e : node.edges)
    if (e.visits > 0) {
      visits += e.visits;
      most = std::max(most, e.visits);
      probs += std::max(static_cast<double>(e.prior), 1e-30);
    }
  double weighted = 0.0;  // the visited actions' Q, weighted by their priors
  for (const SearchEdge& e : node.edges)
    if (e.visits > 0) weighted += std::max(static_cast<double>(e.prior), 1e-30) * (e.value / e.visits) / probs;
  const double mixed = (node.raw_value + visits * weighted) / (visits + 1.0);
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (size_t e = 0; e < out.size(); ++e) {
    const SearchEdge& edge = node.edges[e];
    out[e] = edge.visits > 0 ? edge.value / edge.visits : mixed;
    low = std::min(low, out[e]);
    high = std::max(high, out[e]);
  }
  const double scale = (options_.maxvisit_init + most) * options_.value_scale;
  for (double& q : out) q = scale * (q - low) / std::max(high - low, 1e-8);
}

// A root edge's score in the halving (mctx's score_considered): -inf unless it has the visits
// the schedule asks for.
double Search::RootScore(const Tree& t, const SearchNode& node, size_t edge, const std::vector<double>& sigma_q,
                         int considered_visits) const {
  const SearchEdge& e = node.edges[edge];
  const auto it = std::lower_bound(t.legal.begin(), t.legal.end(), e.action);
  if (e.visits != considered_visits || it == t.legal.end() || *it != e.action)
    return -std::numeric_limits<double>::infinity();
  const double g = t.gumbel[static_cast<size_t>(it - t.legal.begin())];
  return std::max(-1e9, g + Logit(e) + sigma_q[edge]);
}

// The edge a walk takes at a node under Gumbel selection (search.h): at the root the halving's,
// elsewhere the one that most lags the improved policy in visits (mctx's interior rule).
int Search::SelectGumbel(const Tree& t, int index, const std::vector<int>& legal) const {
  const SearchNode& node = t.nodes[static_cast<size_t>(index)];
  std::vector<double> sigma;
  CompletedQ(node, sigma);
  std::vector<char> usable(node.edges.size(), 0);
  size_t k = 0;
  for (size_t e = 0; e < node.edges.size(); ++e) {
    while (k < legal.size() && legal[k] < node.edges[e].action) ++k;
    usable[e] = k < legal.size() && legal[k] == node.edges[e].action;
  }
  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  if (GumbelRoot(t, index)) {
    const size_t at = std::min(static_cast<size_t>(node.visits), t.halving.size() - 1);
    int wanted = t.halving[at];
    bool any = false;
    for (size_t e = 0; e < node.edges.size(); ++e) any = any || (usable[e] && node.edges[e].visits == wanted);
    if (!any) {  // none has the visits asked for: the least visited
      wanted = std::numeric_limits<int>::max();
      for (size_t e = 0; e < node.edges.size(); ++e)
        if (usable[e]) wanted = std::min(wanted, node.edges[e].visits);
    }
    for (size_t e = 0; e < node.edges.size(); ++e) {
      if (!usable[e]) continue;
      const double score = RootScore(t, node, e, sigma, wanted);
      if (best < 0 || score > best_score) best = static_cast<int>(e), best_score = score;
    }
    return best;
  }
  double high = -std::numeric_limits<double>::infinity();
  int visits = 0;
  for (size_t e = 0; e < node.edges.size(); ++e)
    if (usable[e]) {
      high = std::max(high, Logit(node.edges[e]) + sigma[e]);
      visits += node.edges[e].visits;
    }
  double sum = 0.0;
  for (size_t e = 0; e < node.edges.size(); ++e)
    if (usable[e]) sum += std::exp(Logit(node.edges[e]) + sigma[e] - high);
  for (size_t e = 0; e < node.edges.size(); ++e) {
    if (!usable[e]) continue;
    const double p = std::exp(Logit(node.edges[e]) + sigma[e] - high) / sum;
    const double score = p - static_cast<double>(node.edges[e].visits) / (1.0 + visits);
    if (best < 0 || score > best_score) best = static_cast<int>(e), best_score = score;
  }
  return best;
}

// The move of a Gumbel root: the halving's survivor; the policy: the root's improved policy.
int64_t Search::DecideGumbel(const Tree& t, const SearchNode& node, float* policy) const {
  std::vector<double> sigma;
  CompletedQ(node, sigma);
  int most = 0;
  for (const SearchEdge& e : node.edges) most = std::max(most, e.visits);
  size_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  for (size_t e = 0; e < node.edges.size(); ++e) {
    const double score = RootScore(t, node, e, sigma, most);
    if (score > best_score) best = e, best_score = score;
    high = std::max(high, Logit(node.edges[e]) + sigma[e]);
  }
  double sum = 0.0;
  for (size_t e = 0; e < node.edges.size(); ++e) sum += std::exp(Logit(node.edges[e]) + sigma[e] - high);
  for (size_t e = 0; e < node.edges.size(); ++e)
    policy[node.edges[e].action] = static_cast<float>(std::exp(Logit(node.edges[e]) + sigma[e] - high) / sum);
  return node.edges[best].action;
}

}  // namespace island_fortress
