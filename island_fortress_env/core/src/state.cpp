// The public API, the dispatch by decision and the moves of components (engine/state.py,
// engine/fields.py). The phases and role actions live in phases.cpp and roles.cpp.
#include "state.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "rng.h"

namespace island_fortress {

namespace {
constexpr size_t kLegalReserve = 64;  // legal actions a decision rarely exceeds
}  // namespace

State::State(std::shared_ptr<const Game> game, uint64_t seed)
    : StateData(std::move(game), seed), seed_(seed), tallies_(std::in_place) {
  const Totals& totals = game_->totals();
  sup_jade_ = totals.jade;
  sup_treasure_ = totals.treasure;
  sup_chips_ = totals.buyback_chips;
  sup_reinf_ = totals.reinforcements;
  sup_laborers_ = totals.laborers;
  sup_convicts_ = totals.convicts;
  gov_stock_ = totals.governor_blocks;
  for (int p = 0; p < n_; ++p) stock_blocks_[p] = totals.blocks_per_player;
  Setup();
}

const std::vector<int>& State::LegalActions() const {
  if (!legal_valid_) {
    legal_.clear();
    if (!legal_.capacity()) legal_.reserve(kLegalReserve);  // one allocation for most decisions
    ComputeLegal(legal_);
    legal_valid_ = true;
  }
  return legal_;
}

bool State::IsLegal(int64_t action) const {
  if (action < 0 || action >= kNumActions) return false;
  const std::vector<int>& legal = LegalActions();
  return std::binary_search(legal.begin(), legal.end(), static_cast<int>(action));
}

// E26: an illegal action changes nothing (the Python side raises the one error naming it).
bool State::ApplyAction(int64_t action) {
  if (!IsLegal(action)) return false;
  ApplyLegalAction(static_cast<int>(action));
  return true;
}

std::array<double, kMaxPlayers> State::Returns() const {
  // Zero-sum: the k winners share the win, losers pay for it (scoring.win_loss_returns).
  std::array<double, kMaxPlayers> out{};
  if (!IsTerminal()) return out;
  const int k = num_winners_;
  for (int p = 0; p < n_; ++p) {
    double share = 0.0;
    for (int i = 0; i < k; ++i)
      if (winners_[i] == p) share = 1.0 / k;
    out[p] = share * n_ / (n_ - 1) - 1.0 / (n_ - 1);
  }
  return out;
}

State State::WithBlock(int cell, int player, bool governor) const {
  // A copy with the log when this state records one (the engine's with_block keeps it), else a
  // look-ahead copy.
  State other = logging_ ? State(*this) : State(*this, kLookAhead);
  if (recording_) {
    if (!logging_) other.history_ = history_;
    other.recording_ = true;
    other.history_.insert(other.history_.end(), {kHistoryWithBlock, static_cast<int16_t>(cell),
                                                 static_cast<int16_t>(player), static_cast<int16_t>(governor)});
  }
  const int bit = geo_->cell_bits[cell];
  if (!governor) other.blocks_[player] -= 1;
  other.PlaceBlock(player, bit, governor);
  other.legal_valid_ = false;
  return other;
}

State State::RedealUnseen(int seat, uint64_t seed) const {
  uint64_t gen = seed;
  State other = *this;
  // The cards `seat` cannot see, lowest id first: the deck and the other players' hands and
  // choices (so the deal depends on which cards are unseen only), shuffled.
  uint64_t unseen = 0;
  for (int i = 0; i < deck_size_; ++i) unseen |= uint64_t{1} << deck_[i];
  for (int p = 0; p < n_; ++p)
    if (p != seat) unseen |= favor_hand_[p] | drawn_[p];
  std::array<int, kMaxFavorCards> pool{};
  int size = 0;
  ForEachBit(unseen, [&](int card) { pool[size++] = card; });
  rng::Shuffle(gen, pool.data(), size);
  // Dealt again in the same counts: each other player's hand, then its choice; the rest is the deck.
  int at = 0;
  for (int p = 0; p < n_; ++p) {
    if (p == seat) continue;
    for (std::array<uint64_t, kMaxPlayers>* field : {&other.favor_hand_, &other.drawn_}) {
      const int count = PopCount((*field)[p]);
      uint64_t cards = 0;
      for (int i = at; i < at + count; ++i) cards |= uint64_t{1} << pool[i];
      (*field)[p] = cards;
      at += count;
    }
  }
  other.deck_size_ = size - at;
  for (int i = at; i < size; ++i) other.deck_[i - at] = pool[i];
  if (decision_ == Decision::kPetitionBid) {
    // The other players' sealed bids, uniform from 0 to their Jade (E3).
    for (int i = 0; i < order_pos_; ++i) {
      const int p = order_[i];
      if (p != seat) other.bids_[p] = static_cast<int64_t>(rng::Below(gen, static_cast<uint64_t>(jade_[p]) + 1));
    }
    // A bid being entered digit by digit: new leading digits, completed with zeros, within the
    // Jade: Jade // 101 ** (digits left + 1), by repeated division (no power overflows).
    const int p = current_;
    if (p != seat) {
      int64_t high = jade_[p];
      for (int i = 0; i <= bid_digits_left_ && high > 0; ++i) high /= kBidBase;
      other.bids_[p] = static_cast<int64_t>(rng::Below(gen, static_cast<uint64_t>(high) + 1));
    }
  }
  other.rng_ = rng::NextU64(gen);  // the future shuffles and tie-breaks differ too (E24)
  other.legal_valid_ = false;      // another player's legal choices depend on the redealt cards
  if (recording_) {
    other.history_.insert(other.history_.end(), {kHistoryRedeal, static_cast<int16_t>(seat)});
    for (int shift = 0; shift < 64; shift += 16)
      other.history_.push_back(static_cast<int16_t>(static_cast<uint16_t>(seed >> shift)));
  }
  return other;
}

State State::Replay(std::shared_ptr<const Game> game, uint64_t seed, const std::vector<int16_t>& history,
                    bool logging) {
  State s(std::move(game), seed);
  s.set_logging(logging);
  const size_t size = history.size();
  const auto fail = [&](size_t at, const std::string& why) {
    throw std::invalid_argument("not a history of this game: entry " + std::to_string(at) + " of " +
                                std::to_string(size) + ": " + why);
  };
  for (size_t i = 0; i < size;) {
    const int entry = history[i];
    if (entry >= 0) {
      if (!s.ApplyAction(entry)) fail(i, "action " + std::to_string(entry) + " is not legal there");
      i += 1;
    } else if (entry == kHistoryWithBlock) {
      if (size - i < 4) fail(i, "a with_block cut short");
      const int cell = history[i + 1], player = history[i + 2], governor = history[i + 3];
      if (cell < 0 || cell >= s.geo_->num_cells || player < 0 || player >= s.n_ || governor < 0 || governor > 1)
        fail(i, "with_block(" + std::to_string(cell) + ", " + std::to_string(player) + ", " +
                    std::to_string(governor) + ") is off the wall or the table");
      s = s.WithBlock(cell, player, governor != 0);
      i += 4;
    } else if (entry == kHistoryRedeal) {
      if (size - i < 6) fail(i, "a redeal cut short");
      const int seat = history[i + 1];
      if (seat < 0 || seat >= s.n_) fail(i, "a redeal for seat " + std::to_string(seat));
      uint64_t redeal_seed = 0;
      for (int k = 0; k < 4; ++k)
        redeal_seed |= static_cast<uint64_t>(static_cast<uint16_t>(history[i + 2 + static_cast<size_t>(k)])) << (16 * k);
      s = s.RedealUnseen(seat, redeal_seed);
      i += 6;
    } else {
      fail(i, "no operation " + std::to_string(entry));
    }
  }
  return s;
}

void State::ComputeLegal(std::vector<int>& out) const {
  const Decision d = decision_;
  if (d == Decision::kGameOver) return;
  const int p = current_;
  switch (d) {  // each phase / role action owns its legal choices
    case Decision::kKeepDealtFavors: LegalKeep(p, out); break;
    case Decision::kPetitionBid: LegalBidDigits(p, out); break;
    case Decision::kChooseRoleAction: LegalRole(p, out); break;
    case Decision::kRecruitCount: LegalRecruit(p, out); break;
    case Decision::kBuyBlocksCount: LegalBuy(p, out); break;
    case Decision::kDrawFavorsCount: LegalDraw(p, out); break;
    case Decision::kKeepDrawnFavors: LegalKeep(p, out); break;
    case Decision::kRemoveReinforcementCell: LegalRemove(p, out); break;
    case Decision::kBuildCount: LegalBuildCount(p, out); break;
    case Decision::kBuildCell: LegalBuildCell(p, out); break;
    case Decision::kAssignLaborers: LegalLaborers(p, out); break;
    case Decision::kPlayFavorCard: LegalFavor(p, out); break;
    case Decision::kReinforceCell: LegalReinforce(p, out); break;
    case Decision::kReplaceCell: LegalReplace(p, out); break;
    case Decision::kTreasurePrisons: LegalPrisons(p, out); break;
    case Decision::kMoveTaskmaster: LegalMove(p, out); break;
    case Decision::kBuybackOrEndTurn: LegalTurnEnd(p, out); break;
    case Decision::kFavorTradeIn: LegalTrade(p, out); break;
    case Decision::kGameOver: break;
  }
  if (IsActionPhase(d) && gov_in_hand_ && p == holder_) {
    std::vector<int> bits;
    GovernorBits(bits);
    for (int b : bits) out.push_back(kGovernor + geo_->bit_cell[b]);
    std::sort(out.begin(), out.end());
  }
  if (out.empty()) out.push_back(kPass);  // C12: never an empty choice
}

void State::Apply(int a) {
  const int p = current_;
  if (a >= kGovernor && a < kGovernor + geo_->num_cells) {
    PlaceGovernor(p, geo_->cell_bits[a - kGovernor]);
    return;
  }
  // C12, E22: PASS is the only option when nothing else is legal, which a legal game never needs.
  if (a == kPass) {
    Log(event::Pass{p});
    if (IsActionPhase(decision_)) EndTurn();
    return;
  }
  switch (decision_) {
    case Decision::kKeepDealtFavors: OnKeep(p, a); break;
    case Decision::kPetitionBid: OnBid(p, a); break;
    case Decision::kChooseRoleAction: OnRole(p, a); break;
    case Decision::kRecruitCount: OnRecruit(p, a); break;
    case Decision::kBuyBlocksCount: OnBuy(p, a); break;
    case Decision::kDrawFavorsCount: OnDraw(p, a); break;
    case Decision::kKeepDrawnFavors: OnKeep(p, a); break;
    case Decision::kRemoveReinforcementCell: OnRemove(p, a); break;
    case Decision::kBuildCount: OnBuildCount(p, a); break;
    case Decision::kBuildCell: OnBuildCell(p, a); break;
    case Decision::kAssignLaborers: OnLaborers(p, a); break;
    case Decision::kPlayFavorCard: OnFavor(p, a); break;
    case Decision::kReinforceCell: OnReinforce(p, a); break;
    case Decision::kReplaceCell: OnReplace(p, a); break;
    case Decision::kTreasurePrisons: OnPrisons(p, a); break;
    case Decision::kMoveTaskmaster: OnMove(p, a); break;
    case Decision::kBuybackOrEndTurn: OnTurnEnd(p, a); break;
    case Decision::kFavorTradeIn: OnTrade(p, a); break;
    case Decision::kGameOver: break;
  }
}

// --- moves of components (engine/fields.py)

int64_t State::TakeJade(int64_t amount) {
  const int64_t take = unlimited_ ? amount : std::min(amount, sup_jade_);
  sup_jade_ -= take;
  return take;
}

void State::PayJade(int p, int64_t amount) {
  jade_[p] -= amount;
  sup_jade_ += amount;
  if (tallies_) tallies_->jade_spent[p] += amount;
}

void State::AddScore(int p, int64_t points, ScoreReason reason, int region, int level) {
  score_[p] += points;
  if (tallies_) tallies_->points_by_reason[p][static_cast<size_t>(reason)] += points;
  Log(event::Score{p, points, reason, region, level});
}

void State::ToPrison(int region, int64_t jade, int64_t convicts) {
  // An empty supply sends nothing (C7).
  const int64_t j = unlimited_ ? jade : std::min(jade, sup_jade_);
  const int64_t c = unlimited_ ? convicts : std::min(convicts, sup_convicts_);
  sup_jade_ -= j;
  sup_convicts_ -= c;
  prison_jade_[region] += j;
  prison_convicts_[region] += c;
}

void State::GainChip(int p) {
  if (sup_chips_ > 0 || unlimited_) {
    sup_chips_ -= 1;
    chips_[p] += 1;
  }
}

void State::GainTreasure(int p, int64_t amount, ScoreReason reason, int level) {
  const int64_t got = unlimited_ ? amount : std::min(amount, sup_treasure_);
  if (got) {
    sup_treasure_ -= got;
    treasure_[p] += got;
    AddScore(p, got, reason, -1, level);  // every Treasure is worth a victory point
  }
}

void State::GainLaborers(int p, int64_t amount) {
  const int64_t got = unlimited_ ? amount : std::min(amount, sup_laborers_);
  sup_laborers_ -= got;
  laborers_[p] += got;
}

void State::GainConvicts(int p, int64_t amount) {
  const int64_t got = unlimited_ ? amount : std::min(amount, sup_convicts_);
  sup_convicts_ -= got;
  convicts_[p] += got;
}

void State::PlaceBlock(int p, int bit, bool governor) {
  // Put a block on the wall and score what it completes (row, level, tower).
  const Bits b = Bit(bit);
  occ_ |= b;
  if (governor) {
    gov_bits_ |= b;
  } else {
    own_[p] |= b;
  }
  const int level = bit / kStride;
  Log(event::Place{p, geo_->bit_cell[bit], governor});
  if (level == kLevels - 1) {  // a tower cell
    if (!governor) AddScore(p, kTowerPoints, ScoreReason::kTower);
  } else {
    const int region = geo_->bit_region[bit];
    const Bits row = geo_->row_mask[region][level];
    if ((occ_ & row) == row) {
      GainChip(p);  // the completer's Buyback Chip, Governor block or not (C6)
      Log(event::RowComplete{p, region, level});
      ScoreRow(region, level, true);
      const Bits lm = geo_->level_mask[level];
      if ((occ_ & lm) == lm) ScoreLevel(level, true);
    }
  }
  if (occ_ == geo_->valid) wall_completer_ = p;
}

namespace {
// Players holding the most blocks of `mask`; nobody when nobody has a block (ties all win).
int Majority(const std::array<Bits, kMaxPlayers>& own, int n, Bits mask, std::array<int, kMaxPlayers>& out) {
  std::array<int, kMaxPlayers> counts{};
  int best = 0;
  for (int p = 0; p < n; ++p) {
    counts[p] = PopCount(own[p] & mask);
    best = std::max(best, counts[p]);
  }
  int k = 0;
  if (best <= 0) return 0;
  for (int p = 0; p < n; ++p)
    if (counts[p] == best) out[k++] = p;
  return k;
}
}  // namespace

void State::ScoreRow(int region, int level, bool completed) {
  std::array<int, kMaxPlayers> best{};
  const int k = Majority(own_, n_, geo_->row_mask[region][level], best);
  const ScoreReason reason = completed ? ScoreReason::kRow : ScoreReason::kRowAtEnd;
  for (int i = 0; i < k; ++i) AddScore(best[i], kRowPoints[level], reason, region, level);
}

void State::ScoreLevel(int level, bool completed) {
  std::array<int, kMaxPlayers> best{};
  const int k = Majority(own_, n_, geo_->level_mask[level], best);
  const ScoreReason reason = completed ? ScoreReason::kLevel : ScoreReason::kLevelAtEnd;
  for (int i = 0; i < k; ++i) GainTreasure(best[i], 1, reason, level);
}

}  // namespace island_fortress
