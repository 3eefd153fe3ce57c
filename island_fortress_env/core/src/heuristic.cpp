// heuristic.py's HeuristicAgent, decision for decision. Every floating-point expression is
// written in the Python's order of operations (the build turns off fused multiply-add), and the
// noise is drawn in the same order, so both players choose the same actions.
#include "heuristic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace island_fortress {

namespace {

constexpr double kBig = 1e9;
// heuristic.py's evaluation weights.
constexpr double kJadeBase = 0.12, kJadeFading = 0.38;
constexpr double kBlock = 1.6, kBlockCap = 3.0;
constexpr double kLaborer = 0.9, kConvict = 0.45;
constexpr double kIncomeWeight = 0.45, kPetitionWeight = 0.25;
constexpr double kOppFavor = 1.2;
constexpr double kFavorDone = 0.15;
constexpr double kFavorProgress = 0.3, kFavorStep = 0.6;
constexpr double kMove = 0.5;
constexpr double kRelMax = 0.5;

bool IsGovernor(int a) { return a >= kGovernor && a < kGovernor + kMaxCells; }

// Sub-decisions of a role action that the look-ahead plays itself (heuristic.py's _FINISH_DECISIONS).
bool IsFinishDecision(Decision d) {
  return IsActionPhase(d) && d != Decision::kChooseRoleAction && d != Decision::kBuybackOrEndTurn &&
         d != Decision::kDrawFavorsCount && d != Decision::kKeepDrawnFavors;
}

double LeadWeight(int lead, int empty) {
  if (lead > empty) return 1.0;
  if (lead > 0) return 0.8 + 0.1 * std::min(lead, 2);
  if (lead == 0) return 0.6;
  if (lead == -1) return 0.2;
  return 0.04;
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

namespace {
constexpr std::array<uint64_t, kMaxPlayers> kOwnMultipliers = {
    0xBF58476D1CE4E5B9ULL, 0x94D049BB133111EBULL, 0xD6E8FEB86659FD93ULL, 0xFF51AFD7ED558CCDULL};

// A 64-bit mix of a 128-bit set (for the direct-mapped caches; any collision is caught by the key).
uint64_t Mix(uint64_t h, Bits b) {
  h ^= static_cast<uint64_t>(b) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h ^= static_cast<uint64_t>(b >> 64) * 0xBF58476D1CE4E5B9ULL;
  return h * 0x94D049BB133111EBULL;
}
}  // namespace

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
    step_pow_[static_cast<size_t>(k)] = std::pow(kFavorStep, exponent);
  }
  info_.total_rounds = game.governor_blocks();
  for (int r = 0; r < geo.regions; ++r)
    for (int lv = 0; lv < 3; ++lv)
      info_.majorities.emplace_back(static_cast<uint64_t>(geo.row_mask[r][lv]), kRowPoints[lv], 5);
  for (int lv = 0; lv < 3; ++lv)
    info_.majorities.emplace_back(static_cast<uint64_t>(geo.level_mask[lv]), 1.5, PopCount(geo.level_mask[lv]));
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
  if (d == Decision::kDrawFavorsCount) return Contains(legal, kDrawCount) ? kDrawCount : plain[0];
  // Counts, cells, moves, favor cards: look ahead to the end of the action.
  return BestCompletion(st, plain).second;
}

// ------------------------------------------------------------------ evaluation

double Heuristic::RemainingRounds(const State& st) const {
  const Decision d = st.decision();
  if (IsActionPhase(d)) return st.gov_stock() + (3 - st.turns_taken()[me_]) / 3.0;
  if (d == Decision::kGameOver || d == Decision::kFavorTradeIn) return 0.0;
  return static_cast<double>(st.gov_stock() + (d == Decision::kPetitionBid ? 1 : 0));
}

std::array<double, kMaxPlayers> Heuristic::WallValues(const State& st) const {
  // Provisional row and level majorities and the least-built-region bonus, for every seat;
  // memoised by the wall's contents.
  const int n = st.n();
  const Bits occ = st.occ();
  const auto& own = st.own();
  // The key's words multiplied by odd constants and summed (any collision is caught by the key).
  uint64_t h = static_cast<uint64_t>(occ) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(occ >> 64) * 0xC2B2AE3D27D4EB4FULL;
  for (int p = 0; p < n; ++p)
    h += (static_cast<uint64_t>(own[p]) ^ static_cast<uint64_t>(own[p] >> 64) << 20) * kOwnMultipliers[p];
  if (wall_cache_.empty()) wall_cache_.resize(kWallCacheSize);
  WallEntry& entry = wall_cache_[(h >> 32) & (kWallCacheSize - 1)];
  if (entry.used && entry.occ == occ && entry.own == own) return entry.vals;
  entry.used = true;
  entry.occ = occ;
  entry.own = own;
  entry.vals = ComputeWallValues(st);
  return entry.vals;
}

std::array<double, kMaxPlayers> Heuristic::ComputeWallValues(const State& st) const {
  const int n = st.n();
  const auto occ = static_cast<uint64_t>(st.occ());  // levels 1-3 (the majorities' cells)
  const auto& own = st.own();
  std::array<uint64_t, kMaxPlayers> low{};
  for (int p = 0; p < n; ++p) low[p] = static_cast<uint64_t>(own[p]);
  std::array<double, kMaxPlayers> vals{};
  for (const auto& [mask, pts, empty_total] : info_.majorities) {
    const uint64_t filled = occ & mask;
    if (filled == mask) continue;
    const int empty = empty_total - PopCount(filled);
    std::array<int, kMaxPlayers> counts{};
    int best = 0;
    for (int p = 0; p < n; ++p) {
      counts[p] = PopCount(low[p] & mask);
      best = std::max(best, counts[p]);
    }
    if (!best) continue;
    int nbest = 0;
    for (int p = 0; p < n; ++p) nbest += counts[p] == best;
    int second = best;
    if (nbest < n) {
      second = -1;
      for (int p = 0; p < n; ++p)
        if (counts[p] != best) second = std::max(second, counts[p]);
    }
    for (int p = 0; p < n; ++p) {
      const int c = counts[p];
      if (!c) continue;
      int lead;
      if (c == best) {
        lead = nbest > 1 ? 0 : c - second;
      } else {
        lead = c - best;
      }
      vals[p] += pts * LeadWeight(lead, empty);
    }
  }
  const WallGeometry& geo = st.game().geometry();
  for (int p = 0; p < n; ++p) {
    int least = 0;
    int sum = 0;
    for (int r = 0; r < geo.regions; ++r) {
      const int c = PopCount(own[p] & geo.region_mask[r]);
      least = r == 0 ? c : std::min(least, c);
      sum += c;
    }
    vals[p] += kLeastRegionMultiplier * least + 0.25 * sum;
  }
  return vals;
}

std::array<double, kMaxPlayers> Heuristic::Values(const State& st) const {
  // Public estimate of every seat's final score (own favor hand added by Value).
  const int n = st.n();
  std::array<double, kMaxPlayers> vals{};
  if (st.decision() == Decision::kGameOver) {
    for (int p = 0; p < n; ++p) vals[p] = static_cast<double>(st.score()[p]);
    return vals;
  }
  const std::array<double, kMaxPlayers> wall = WallValues(st);
  const double rem = RemainingRounds(st);
  const double fr = std::min(1.0, rem / 3.0);
  const double endw = 3.0 * (1.0 - 0.6 * fr);  // end-game majorities firm up as the game ends
  const auto& treasure = st.treasure();
  const auto& jade = st.jade();
  const auto& laborers = st.laborers();
  const auto& convicts = st.convicts();
  int64_t t_hi = treasure[0], t_lo = treasure[0], j_hi = jade[0], w_hi = laborers[0] + convicts[0];
  for (int p = 1; p < n; ++p) {
    t_hi = std::max(t_hi, treasure[p]);
    t_lo = std::min(t_lo, treasure[p]);
    j_hi = std::max(j_hi, jade[p]);
    w_hi = std::max(w_hi, laborers[p] + convicts[p]);
  }
  const double vj = kJadeBase + kJadeFading * fr;
  const double vb = kBlock * std::min(1.0, rem / 1.5);
  const double vl = kLaborer * fr;
  const double vc = kConvict * fr;
  const double cap_b = std::min(2.0 * rem + 1.0, kBlockCap);
  const double later = std::max(0.0, rem - 1.0);
  const int top_chip = static_cast<int>(kBuybackChipPoints.size()) - 1;
  for (int p = 0; p < n; ++p) {
    double v = static_cast<double>(st.score()[p]) + wall[p];
    const int64_t chips = st.chips()[p];
    v += kBuybackChipPoints[std::min<int64_t>(chips, top_chip)] + 0.4 * fr * std::min<int64_t>(chips, 2);
    const int64_t t = treasure[p];
    if (t == t_hi) v += endw;
    if (t == t_lo) v -= endw;
    if (jade[p] == j_hi) v += endw;
    if (laborers[p] + convicts[p] == w_hi && w_hi > 0) v += endw;
    v += vj * static_cast<double>(jade[p]);
    // Blocks are worth building only while there is time to build them.
    const int64_t b = st.blocks()[p];
    const auto bd = static_cast<double>(b);
    v += bd <= cap_b ? vb * bd : vb * (cap_b + 0.25 * (bd - cap_b));
    const int64_t lab = laborers[p];
    const int64_t con = convicts[p];
    if (lab || con) {
      const double supply = static_cast<double>(b + std::min<int64_t>(st.stock_blocks()[p], 3));
      const double need = 4.0 * std::min(supply, 2.0 * rem + 1.0);
      const auto units = static_cast<double>(lab * 2 + con);
      const double worth = vl * static_cast<double>(lab) + vc * static_cast<double>(con);
      v += units <= need ? worth : worth * (need + 0.25 * (units - need)) / units;
    }
    v += (static_cast<double>(st.income_bonus()[p]) * kIncomeWeight +
          static_cast<double>(st.petition_bonus()[p]) * kPetitionWeight) *
         later;
    if (p != me_) v += kOppFavor * fr * PopCount(st.favor_hand()[p]);
    vals[p] = v;
  }
  return vals;
}

double Heuristic::Value(const State& st) const {
  std::array<double, kMaxPlayers> vals = Values(st);
  if (st.decision() != Decision::kGameOver) vals[me_] += HandValue(st);
  double best_other = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  int count = 0;
  bool first = true;
  for (int q = 0; q < st.n(); ++q) {
    if (q == me_) continue;
    best_other = first ? vals[q] : std::max(best_other, vals[q]);
    sum = first ? vals[q] : sum + vals[q];
    first = false;
    ++count;
  }
  return vals[me_] - kRelMax * best_other - (1.0 - kRelMax) * sum / count;
}

double Heuristic::RewardValue(int card, double rem) const {
  const std::array<int, kNumRewards>& r = info_.game->deck()[card].rewards;
  const double fr = std::min(1.0, rem / 3.0);
  return r[kRewardVp] + 1.6 * r[kRewardTreasure] + 2.0 * r[kRewardBuybackChips] +
         (kJadeBase + kJadeFading * fr) * r[kRewardJade] + kConvict * fr * r[kRewardConvicts] +
         kLaborer * fr * r[kRewardLaborers] + kBlock * std::min(1.0, rem / 1.5) * r[kRewardWallBlocks] +
         kIncomeWeight * r[kRewardIncome] * std::max(0.0, rem - 1.0) +
         kPetitionWeight * r[kRewardPetition] * std::max(0.0, rem - 1.0);
}

int Heuristic::Missing(int card, Bits free, Bits bad) const {
  // Fewest own blocks still missing for the card's pattern (99 if impossible), memoised for the
  // last (free, bad) asked: the look-ahead asks about the same wall card after card.
  MissingMemo& memo = missing_memo_;
  if (memo.free != free || memo.bad != bad) {
    memo.free = free;
    memo.bad = bad;
    memo.known = 0;
  }
  const uint64_t bit = uint64_t{1} << card;
  if (memo.known & bit) return memo.got[static_cast<size_t>(card)];
  // Every on-wall placement at once, one bit per anchor: a placement is usable when none of its
  // cells is blocked; its count of missing own blocks is summed over the pattern's cells in four
  // bit planes (a pattern marks at most 15 cells), and the least count of a usable placement is read
  // off the planes from the highest down. The same minimum as trying the placements one by one.
  const std::vector<int>& offsets = info_.game->deck()[static_cast<size_t>(card)].offsets;
  Bits usable = info_.placements[static_cast<size_t>(card)];
  for (int off : offsets) usable &= ~(bad >> off);
  int got = 99;
  if (usable) {
    std::array<Bits, 4> plane{};
    const Bits missing = ~free;
    for (int off : offsets) {
      Bits carry = (missing >> off) & usable;
      for (Bits& b : plane) {
        const Bits next = b & carry;
        b ^= carry;
        carry = next;
      }
    }
    Bits candidates = usable;
    got = 0;
    for (int j = 3; j >= 0; --j) {
      const Bits zero = candidates & ~plane[static_cast<size_t>(j)];
      if (zero) {
        candidates = zero;
      } else {
        got |= 1 << j;
      }
    }
  }
  memo.known |= bit;
  memo.got[static_cast<size_t>(card)] = got;
  return got;
}

double Heuristic::CardValue(int card, double rem, Bits free, Bits bad) const {
  const int missing = Missing(card, free, bad);
  if (missing >= 99) return 0.0;
  const double value = RewardValue(card, rem);
  if (missing == 0) return kFavorDone * value * std::min(1.0, rem);
  return kFavorProgress * value * step_pow_[static_cast<size_t>(missing)] *
         std::min(1.0, rem / (1.0 + 0.5 * missing));
}

double Heuristic::HandValue(const State& st) const {
  const uint64_t hand = st.favor_hand()[me_];
  if (!hand) return 0.0;
  const double rem = RemainingRounds(st);
  const Bits free = st.own()[me_] & ~st.reinf();
  const Bits bad = st.occ() & ~free;
  uint64_t h = Mix(Mix(hand, free), bad);
  uint64_t rem_bits;
  std::memcpy(&rem_bits, &rem, sizeof(rem_bits));
  h = Mix(h, rem_bits);
  if (hand_cache_.empty()) hand_cache_.resize(kHandCacheSize);
  HandEntry& entry = hand_cache_[(h >> 32) & (kHandCacheSize - 1)];
  if (entry.used && entry.hand == hand && entry.free == free && entry.bad == bad && entry.rem == rem)
    return entry.value;
  double sum = 0.0;
  ForEachBit(hand, [&](int c) { sum += CardValue(c, rem, free, bad); });
  entry = HandEntry{hand, free, bad, rem, sum, true};
  return sum;
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
        if (d == Decision::kMoveTaskmaster) v += MoveBonus(st, cand - kMoveRegion);
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
  return kMove * (there_value - here_value);
}

double Heuristic::DrawValue(const State& st) const {
  // Expected worth of drawing 3 favor cards and keeping the best 2 (cards not yet seen).
  uint64_t seen = st.favor_hand()[me_] | st.drawn()[me_] | st.favor_discard();
  for (int p = 0; p < st.n(); ++p) seen |= st.favor_played()[p];
  const uint64_t unknown = info_.all_cards & ~seen;
  if (!unknown || st.deck_size() < 3) return -kBig;
  const double rem = RemainingRounds(st);
  const Bits free = st.own()[me_] & ~st.reinf();
  const Bits bad = st.occ() & ~free;
  const bool few = PopCount(st.favor_hand()[me_]) < 4;
  // Memoised by all it depends on: the unseen cards, the rounds left, the wall and the hand's size.
  uint64_t rem_bits;
  std::memcpy(&rem_bits, &rem, sizeof(rem_bits));
  const uint64_t h = Mix(Mix(unknown * 0x9E3779B97F4A7C15ULL ^ rem_bits ^ few, free), bad);
  if (draw_cache_.empty()) draw_cache_.resize(kDrawCacheSize);
  DrawEntry& entry = draw_cache_[(h >> 32) & (kDrawCacheSize - 1)];
  if (entry.used && entry.unknown == unknown && entry.rem == rem && entry.free == free && entry.bad == bad &&
      entry.few == few)
    return entry.value;
  std::array<double, kMaxFavorCards> vals{};
  int size = 0;
  ForEachBit(unknown, [&](int c) { vals[static_cast<size_t>(size++)] = CardValue(c, rem, free, bad); });
  std::stable_sort(vals.begin(), vals.begin() + size, [](double x, double y) { return x > y; });
  double total = 0.0;
  for (int i = 0; i < size; ++i) total += vals[static_cast<size_t>(i)];
  const double mean = total / static_cast<double>(size);
  const int k = std::max<int>(1, size / 3);
  double top = 0.0;
  for (int i = 0; i < k && i < size; ++i) top += vals[static_cast<size_t>(i)];
  top /= k;
  const double value = (mean + top) * (few ? 1.0 : 0.5);
  entry = DrawEntry{unknown, free, bad, rem, few, value, true};
  return value;
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
    if (v > best + 0.3) {
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
    if (v > best + 0.4) {
      best = v;
      choice = a;
    }
  }
  if (choice != kEndTurn || gov.empty()) return choice;
  const auto [gain, cell] = BestGovernor(st, gov);
  const bool last_chance = st.turns_taken()[me_] == 2;
  if (gain > 1.0 || (last_chance && gain >= 0.0)) return cell;
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
    const int i = a - kPrisonPair;
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
  const double vj = kJadeBase + kJadeFading * std::min(1.0, RemainingRounds(st) / 3.0);
  const double cap = std::min({worth / (2.0 * vj), static_cast<double>(FloorDiv(jade, 3)), 5.0});
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
