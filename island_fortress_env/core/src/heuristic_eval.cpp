// heuristic.py's evaluation (_values, _value, the favor cards' worth): a position's value for the
// seat deciding, every floating-point expression in the Python's order of operations.
#include <algorithm>
#include <cstring>
#include <limits>

#include "heuristic.h"

namespace island_fortress {

namespace w = heuristic_weights;

namespace {

double LeadWeight(int lead, int empty) {
  if (lead > empty) return 1.0;
  if (lead > 0) return 0.8 + 0.1 * std::min(lead, 2);
  if (lead == 0) return w::kLeadTied;
  if (lead == -1) return w::kLeadBehindOne;
  return w::kLeadBehind;
}

constexpr std::array<uint64_t, kMaxPlayers> kOwnMultipliers = {
    0xBF58476D1CE4E5B9ULL, 0x94D049BB133111EBULL, 0xD6E8FEB86659FD93ULL, 0xFF51AFD7ED558CCDULL};

// A 64-bit mix of a 128-bit set (for the direct-mapped caches; any collision is caught by the key).
uint64_t Mix(uint64_t h, Bits b) {
  h ^= static_cast<uint64_t>(b) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h ^= static_cast<uint64_t>(b >> 64) * 0xBF58476D1CE4E5B9ULL;
  return h * 0x94D049BB133111EBULL;
}
}  // namespace

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
  const double vj = w::kJadeBase + w::kJadeFading * fr;
  const double vb = w::kBlock * std::min(1.0, rem / 1.5);
  const double vl = w::kLaborer * fr;
  const double vc = w::kConvict * fr;
  const double cap_b = std::min(2.0 * rem + 1.0, w::kBlockCap);
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
    v += (static_cast<double>(st.income_bonus()[p]) * w::kIncome +
          static_cast<double>(st.petition_bonus()[p]) * w::kPetition) *
         later;
    if (p != me_) v += w::kOppFavor * fr * PopCount(st.favor_hand()[p]);
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
  return vals[me_] - w::kRelMax * best_other - (1.0 - w::kRelMax) * sum / count;
}

double Heuristic::RewardValue(int card, double rem) const {
  const std::array<int, kNumRewards>& r = info_.game->deck()[card].rewards;
  const double fr = std::min(1.0, rem / 3.0);
  return r[kRewardVp] + w::kTreasureReward * r[kRewardTreasure] + w::kBuybackChipReward * r[kRewardBuybackChips] +
         (w::kJadeBase + w::kJadeFading * fr) * r[kRewardJade] + w::kConvict * fr * r[kRewardConvicts] +
         w::kLaborer * fr * r[kRewardLaborers] + w::kBlock * std::min(1.0, rem / 1.5) * r[kRewardWallBlocks] +
         w::kIncome * r[kRewardIncome] * std::max(0.0, rem - 1.0) +
         w::kPetition * r[kRewardPetition] * std::max(0.0, rem - 1.0);
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
  if (missing == 0) return w::kFavorDone * value * std::min(1.0, rem);
  return w::kFavorProgress * value * step_pow_[static_cast<size_t>(missing)] *
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

}  // namespace island_fortress
