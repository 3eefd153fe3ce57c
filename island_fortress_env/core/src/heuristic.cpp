// heuristic.py's HeuristicAgent, decision for decision: its look-ahead and its choices (the
// evaluation is heuristic_eval.cpp's, the weights generated/heuristic_weights.h's). Every
// floating-point expression is written in the Python's order of operations (the build turns off
// fused multiply-add), and the noise is drawn in the same order, so both choose the same actions.
#include "heuristic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace island_fortress {

namespace w = heuristic_weights;

namespace {

bool IsGovernor(int a) { return a >= kGovernor && a < kGovernor + kMaxCells; }

// Sub-decisions of a role action that the look-ahead plays itself (heuristic.py's _FINISH_DECISIONS).
bool IsFinishDecision(Decision d) {
  return IsActionPhase(d) && d != Decision::kChooseRoleAction && d != Decision::kBuybackOrEndTurn &&
         d != Decision::kDrawFavorsCount && d != Decision::kKeepDrawnFavors;
}

int64_t FloorDiv(int64_t a, int64_t b) {  // Python's //
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool Contains(const std::vector<int>& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); }

std::vector<int> WithoutGovernor(const std::vector<int>& legal) {
  std::vector<int> out;
  for (int a : legal)
    if (!IsGovernor(a)) out.push_back(a);
  return out;
}

}  // namespace

uint64_t Pcg64::Next() {
  const Bits multiplier = (static_cast<Bits>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
  state_ = state_ * multiplier + inc_;
  const auto hi = static_cast<uint64_t>(state_ >> 64);
  const auto lo = static_cast<uint64_t>(state_);
  const auto rot = static_cast<unsigned>(state_ >> 122);
  const uint64_t x = hi ^ lo;
  return (x >> rot) | (x << ((64U - rot) & 63U));
}

size_t Heuristic::CacheBytes() {
  constexpr size_t kBlock = 32;  // a heap block's bookkeeping
  constexpr size_t kOpportunities = 64;  // Opportunity's values one decision keeps, at most about
  return kWallCacheSize * sizeof(WallEntry) + kHandCacheSize * sizeof(HandEntry) +
         kDrawCacheSize * sizeof(DrawEntry) +
         (kMaxRegions * 3 + 3) * sizeof(std::tuple<uint64_t, double, int>) + kMaxFavorCards * sizeof(Bits) +
         kOpportunities * (sizeof(std::pair<const OppKey, double>) + 4 * sizeof(void*) + kBlock) + 5 * kBlock;
}

void Heuristic::Prepare(const Game& game) {
  if (info_.game == &game) return;
  const WallGeometry& geo = game.geometry();
  info_ = Info{};
  info_.game = &game;
  wall_cache_.clear();  // the cached values are a game's: another game's geometry differs
  hand_cache_.clear();
  missing_memo_ = MissingMemo{};
  draw_cache_.clear();
  for (int k = 0; k < static_cast<int>(step_pow_.size()); ++k) {
    volatile double exponent = k;  // computed by the library's pow at run time, as Python's ** is
    step_pow_[static_cast<size_t>(k)] = std::pow(w::kFavorStep, exponent);
  }
  info_.total_rounds = game.governor_blocks();
  for (int r = 0; r < geo.regions; ++r)
    for (int lv = 0; lv < 3; ++lv)
      info_.majorities.emplace_back(static_cast<uint64_t>(geo.row_mask[r][lv]), kRowPoints[lv], 5);
  for (int lv = 0; lv < 3; ++lv)
    info_.majorities.emplace_back(static_cast<uint64_t>(geo.level_mask[lv]), w::kLevelMajority, PopCount(geo.level_mask[lv]));
  static_assert(3 * kStride <= 64, "the rows of levels 1-3 lie in the wall's low 64 bits");
  const int cards = static_cast<int>(game.deck().size());
  info_.all_cards = cards >= 64 ? ~uint64_t{0} : (uint64_t{1} << cards) - 1;
  for (const FavorCard& card : game.deck()) {
    if (card.offsets.size() > 15) throw std::invalid_argument("a favor card's pattern marks at most 15 cells");
    Bits placements = 0;
    ForEachBit(card.anchor_mask, [&](int anchor) {
      const Bits cells = card.CellsAt(anchor);
      if ((cells & geo.valid) == cells) placements |= Bit(anchor);
    });
    info_.placements.push_back(placements);
  }
}

int Heuristic::Act(const State& state) {
  const std::vector<int>& legal = state.LegalActions();
  if (legal.size() == 1) return legal[0];
  me_ = state.CurrentPlayer();
  Prepare(state.game());
  opp_cache_.clear();  // its key is not the whole state: valid within one decision only
  const State root(state, State::kLookAhead);  // copied many times below: without the event log
  return Decide(root);
}

int Heuristic::ActWith(const State& state, const NumpyBitGen& numpy) {
  struct Lend {  // numpy's generator draws the noise until this call returns (or throws)
    const NumpyBitGen*& slot;
    ~Lend() { slot = nullptr; }
  } lend{numpy_};
  numpy_ = &numpy;
  return Act(state);
}

int Heuristic::Decide(const State& st) {
  const Decision d = st.decision();
  const std::vector<int>& legal = st.LegalActions();
  std::vector<int> gov;
  std::vector<int> plain;
  for (int a : legal) (IsGovernor(a) ? gov : plain).push_back(a);
  if (d == Decision::kKeepDealtFavors || d == Decision::kKeepDrawnFavors) return PickCard(st, plain);
  if (d == Decision::kPetitionBid) return Bid(st, legal);
  if (d == Decision::kFavorTradeIn) return Trade(st, legal);
  if (d == Decision::kChooseRoleAction) return Role(st, plain, gov);
  if (d == Decision::kBuybackOrEndTurn) return TurnEnd(st, plain, gov);
  if (plain.empty()) return BestGovernor(st, gov).second;
  if (d == Decision::kAssignLaborers) return Laborers(st, plain);
  if (d == Decision::kTreasurePrisons) return Prisons(st, plain);
  if (d == Decision::kDrawFavorsCount) return Contains(legal, kDraw) ? kDraw : plain[0];
  // Counts, cells, moves, favor cards: look ahead to the end of the action.
  return BestCompletion(st, plain).second;
}

// ------------------------------------------------------------------ look-ahead

void Heuristic::Finish(State& st) {
  // Play this seat's remaining sub-decisions of the current action greedily (no Governor
  // block, nothing hidden). Stops at the turn end, a new role choice, or a draw.
  while (st.CurrentPlayer() == me_ && IsFinishDecision(st.decision())) {
    const std::vector<int>& all = st.LegalActions();
    std::vector<int> legal = WithoutGovernor(all);
    if (legal.empty()) legal = {Contains(all, kPass) ? kPass : all[0]};
    const Decision d = st.decision();
    int a;
    if (d == Decision::kAssignLaborers) {
      a = Laborers(st, legal);
    } else if (d == Decision::kTreasurePrisons) {
      a = Prisons(st, legal);
    } else if (legal.size() == 1) {
      a = legal[0];
    } else if (d == Decision::kBuildCount) {
      a = BestCompletion(st, legal).second;
    } else {
      double best = -kBig;
      a = legal[0];
      for (int cand : legal) {
        State c(st, State::kLookAhead);
        c.ApplyLegalAction(cand);
        if (c.decision() == Decision::kAssignLaborers && c.CurrentPlayer() == me_)
          c.ApplyLegalAction(Laborers(c, c.LegalActions()));
        double v = Value(c);
        v += Noise();
        if (d == Decision::kMoveTaskmaster) v += MoveBonus(st, cand - kMove);
        if (v > best) {
          best = v;
          a = cand;
        }
      }
    }
    st.ApplyLegalAction(a);
  }
}

double Heuristic::Opportunity(const State& st, int region) {
  // What building this seat's next two blocks in `region` is worth (estimate).
  const int64_t workers = st.laborers()[me_] + st.convicts()[me_];
  if (st.blocks()[me_] == 0 || workers < 2) return 0.0;
  const auto& own = st.own();
  const OppKey key{st.occ(), own[0], own[1], own[2], own[3], region, st.blocks()[me_], workers, RemainingRounds(st)};
  const auto found = opp_cache_.find(key);
  if (found != opp_cache_.end()) return found->second;
  const double base = Value(st);
  std::vector<double> gains;
  const WallGeometry& geo = st.game().geometry();
  const Bits cells = geo.Buildable(st.occ()) & geo.region_mask[region];
  ForEachBit(cells, [&](int bit) {
    if (kWorkersPerLevel[bit / kStride] <= workers)
      gains.push_back(Value(st.WithBlock(geo.bit_cell[bit], me_, false)) - base);
  });
  std::sort(gains.begin(), gains.end(), [](double x, double y) { return x > y; });
  double got = 0.0;
  for (size_t i = 0; i < gains.size() && i < 2; ++i)
    if (gains[i] > 0) got += gains[i];
  if (opp_cache_.size() > 20000) opp_cache_.clear();
  opp_cache_[key] = got;
  return got;
}

double Heuristic::MoveBonus(const State& st, int region) {
  // Half of what the new region offers for building over the current one.
  const int here = st.region()[me_];
  if (region == here) return 0.0;
  const double there_value = Opportunity(st, region);
  const double here_value = Opportunity(st, here);
  return w::kMove * (there_value - here_value);
}

std::pair<double, int> Heuristic::BestCompletion(const State& st, const std::vector<int>& cands) {
  // Each candidate applied to a copy and the action finished greedily.
  double best = -kBig;
  int choice = cands[0];
  bool have_draw = false;
  double draw = 0.0;
  for (int a : cands) {
    State c(st, State::kLookAhead);
    c.ApplyLegalAction(a);
    double v;
    if (c.decision() == Decision::kDrawFavorsCount && c.CurrentPlayer() == me_) {
      if (!have_draw) {
        draw = DrawValue(st);
        have_draw = true;
      }
      v = Value(c) + draw;
    } else {
      Finish(c);
      v = Value(c);
      if (c.region()[me_] != st.region()[me_]) v += MoveBonus(st, c.region()[me_]);
    }
    v += Noise();
    if (v > best) {
      best = v;
      choice = a;
    }
  }
  return {best, choice};
}

// ------------------------------------------------------------------ decisions

int Heuristic::Role(const State& st, const std::vector<int>& plain, const std::vector<int>& gov) {
  auto [best, choice] = BestCompletion(st, plain);
  if (gov.empty()) return choice;
  // Try the most promising Governor placements followed by the best action.
  const double base = Value(st);
  struct Scored {
    double gain;
    int action;
    State state;
  };
  std::vector<Scored> scored;
  for (int a : gov) {
    State c(st, State::kLookAhead);
    c.ApplyLegalAction(a);
    double gain = Value(c) - base;
    gain += Noise();
    scored.push_back(Scored{gain, a, std::move(c)});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) { return -x.gain < -y.gain; });
  for (size_t i = 0; i < scored.size() && i < 3; ++i) {
    const State& c = scored[i].state;
    double v;
    if (c.IsTerminal()) {
      v = Value(c);
    } else if (c.decision() == Decision::kChooseRoleAction && c.CurrentPlayer() == me_) {
      const std::vector<int> legal = WithoutGovernor(c.LegalActions());
      v = legal.empty() ? Value(c) : BestCompletion(c, legal).first;
    } else {
      v = Value(c);
    }
    if (v > best + w::kGovernorMargin) {
      best = v;
      choice = scored[i].action;
    }
  }
  return choice;
}

int Heuristic::TurnEnd(const State& st, const std::vector<int>& plain, const std::vector<int>& gov) {
  double best = Value(st);
  int choice = Contains(plain, kEndTurn) ? kEndTurn : plain[0];
  for (int a : {kBuybackTaskmaster, kBuybackChip}) {
    if (!Contains(plain, a)) continue;
    State c(st, State::kLookAhead);
    c.ApplyLegalAction(a);
    const std::vector<int> legal = WithoutGovernor(c.LegalActions());
    const double v = legal.empty() ? Value(c) : BestCompletion(c, legal).first;
    if (v > best + w::kBuybackMargin) {
      best = v;
      choice = a;
    }
  }
  if (choice != kEndTurn || gov.empty()) return choice;
  const auto [gain, cell] = BestGovernor(st, gov);
  const bool last_chance = st.turns_taken()[me_] == 2;
  if (gain > w::kGovernorGain || (last_chance && gain >= 0.0)) return cell;
  return choice;
}

std::pair<double, int> Heuristic::BestGovernor(const State& st, const std::vector<int>& gov) {
  const double base = Value(st);
  double best = -kBig;
  int choice = gov[0];
  for (int a : gov) {
    State c(st, State::kLookAhead);
    c.ApplyLegalAction(a);
    double v = Value(c) - base;
    v += Noise();
    if (v > best) {
      best = v;
      choice = a;
    }
  }
  return {best, choice};
}

int Heuristic::Laborers(const State& st, const std::vector<int>& legal) const {
  // Convicts die anyway and Laborers come back by halves: lose the least.
  const int64_t need = st.worker_need();
  const bool late = RemainingRounds(st) < 1.0;
  const double cv = late ? 1.0 : 0.5;
  const double lv = 1.0;
  double best = kBig;
  int choice = legal[0];
  for (int a : legal) {
    const int64_t lab = a - kLaborers;
    const double loss = static_cast<double>(need - lab) * cv + static_cast<double>(FloorDiv(lab + 1, 2)) * lv +
                        1e-3 * static_cast<double>(lab);
    if (loss < best) {
      best = loss;
      choice = a;
    }
  }
  return choice;
}

int Heuristic::Prisons(const State& st, const std::vector<int>& legal) const {
  // Send the two Convicts where this seat's Taskmaster (and so its next collection) is.
  const int mine = st.region()[me_];
  for (int a : legal) {
    const int i = a - kPrisons;
    if (i < 0 || i >= static_cast<int>(kPrisonPairs.size())) continue;
    if (kPrisonPairs[i][0] == mine || kPrisonPairs[i][1] == mine) return a;
  }
  return legal[0];
}

int Heuristic::PickCard(const State& st, const std::vector<int>& legal) {
  double rem = RemainingRounds(st);
  if (st.decision() == Decision::kKeepDealtFavors) rem = static_cast<double>(info_.total_rounds);
  const Bits free = st.own()[me_] & ~st.reinf();
  const Bits bad = st.occ() & ~free;
  double best = -kBig;
  int choice = legal[0];
  for (int a : legal) {
    double v = CardValue(a - kKeepFavor, rem, free, bad);
    v += Noise();
    if (v > best) {
      best = v;
      choice = a;
    }
  }
  return choice;
}

int Heuristic::Bid(const State& st, const std::vector<int>& legal) const {
  // A modest bid: what the Governor block and moving first are worth, capped.
  const int64_t jade = st.jade()[me_];
  const double base = Value(st);
  double gain = 0.0;
  const WallGeometry& geo = st.game().geometry();
  ForEachBit(geo.Buildable(st.occ()), [&](int bit) {
    const double g = Value(st.WithBlock(geo.bit_cell[bit], me_, true)) - base;
    if (g > gain) gain = g;
  });
  const double worth = 1.0 + gain;
  const double vj = w::kJadeBase + w::kJadeFading * std::min(1.0, RemainingRounds(st) / 3.0);
  const double cap = std::min({worth / (2.0 * vj), static_cast<double>(FloorDiv(jade, 3)), w::kBidCap});
  int64_t bid = std::max<int64_t>(static_cast<int64_t>(std::trunc(cap)), 0);
  while (bid > 0 && !Contains(legal, kBid + static_cast<int>(bid))) --bid;
  return kBid + static_cast<int>(bid);
}

int Heuristic::Trade(const State& st, const std::vector<int>& legal) const {
  // Favor Trade-in: every unplayed card becomes Jade or a Convict, where it helps most.
  int64_t jade_best = 0, work_best = 0;
  bool first = true;
  for (int q = 0; q < st.n(); ++q) {
    if (q == me_) continue;
    const int64_t w = st.laborers()[q] + st.convicts()[q];
    jade_best = first ? st.jade()[q] : std::max(jade_best, st.jade()[q]);
    work_best = first ? w : std::max(work_best, w);
    first = false;
  }
  const int64_t jade_gap = jade_best - st.jade()[me_];
  const int64_t work_gap = work_best - (st.laborers()[me_] + st.convicts()[me_]);
  std::vector<std::pair<int64_t, int>> options;
  if (Contains(legal, kTradeJade)) options.emplace_back(jade_gap, kTradeJade);
  if (Contains(legal, kTradeConvict)) options.emplace_back(work_gap, kTradeConvict);
  if (options.empty()) return kTradeDone;
  // Prefer the race this card can still win (gap >= 0 and smallest); else keep a lead.
  std::vector<std::pair<int64_t, int>> reachable;
  for (const auto& o : options)
    if (o.first >= 0) reachable.push_back(o);
  if (!reachable.empty()) return std::min_element(reachable.begin(), reachable.end())->second;
  return std::max_element(options.begin(), options.end())->second;
}

}  // namespace island_fortress
