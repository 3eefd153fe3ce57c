// The five role cards (engine/roles/): each action's start, legal choices and effect.
#include <algorithm>

#include "state.h"

namespace island_fortress {

namespace {
// Sorted action ids `base + cell` of the wall cells in `mask`.
void PushCells(const WallGeometry& geo, Bits mask, int base, std::vector<int>& out) {
  const size_t first = out.size();
  ForEachBit(mask, [&](int bit) { out.push_back(base + geo.bit_cell[bit]); });
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}
}  // namespace

// ----------------------------------------------------------------- Recruiter (roles/recruiter.py)

void State::StartRecruit(int p) {
  // Recruiter A (Recruit Laborers): a Convict goes to the prison (E8), then choose how many.
  ToPrison(region_[p], 0, 1);
  decision_ = Decision::kRecruitCount;
}

void State::LegalRecruit(int p, std::vector<int>& out) const {
  // 1..5 Laborers the supply holds and the player can pay for (E7).
  for (int k = 1; k <= kMaxPurchase; ++k)
    if ((k <= sup_laborers_ || unlimited_) && kPurchaseCost[k] <= jade_[p]) out.push_back(kRecruit + k - 1);
}

void State::OnRecruit(int p, int a) {
  const int k = a - kRecruit + 1;
  const int cost = kPurchaseCost[k];
  PayJade(p, cost);
  sup_laborers_ -= k;
  laborers_[p] += k;
  Log(event::Recruited{p, k, cost});
  FinishAction();
}

void State::CollectConvicts(int p) {
  // Recruiter B (Collect 6 Convicts): pay 2 Laborers to the supply, take 6 Convicts.
  laborers_[p] -= kLaborersForConvicts;
  sup_laborers_ += kLaborersForConvicts;
  GainConvicts(p, kConvictsCollected);
  FinishAction();
}

void State::CollectPrison(int p) {
  // Recruiter C (Collect from Prison): everything in the prison of the Taskmaster's region.
  const int region = region_[p];
  jade_[p] += prison_jade_[region];
  convicts_[p] += prison_convicts_[region];
  Log(event::PrisonCollected{p, region, prison_jade_[region], prison_convicts_[region]});
  prison_jade_[region] = 0;
  prison_convicts_[region] = 0;
  FinishAction();
}

// ----------------------------------------------------------------- Planner (roles/planner.py)

void State::StartBuy(int p) {
  // Planner A (Buy Wall Blocks): a Convict goes to the prison, then choose how many.
  ToPrison(region_[p], 0, 1);
  decision_ = Decision::kBuyBlocksCount;
}

void State::LegalBuy(int p, std::vector<int>& out) const {
  for (int k = 1; k <= kMaxPurchase; ++k)
    if (k <= stock_blocks_[p] && kPurchaseCost[k] <= jade_[p]) out.push_back(kBuyBlocks + k - 1);
}

void State::OnBuy(int p, int a) {
  const int k = a - kBuyBlocks + 1;
  const int cost = kPurchaseCost[k];
  PayJade(p, cost);
  stock_blocks_[p] -= k;
  blocks_[p] += k;
  Log(event::Bought{p, k, cost});
  FinishAction();
}

void State::StartDraw(int /*p*/) {
  // Planner B (Draw Favor Cards): declare the draw first (C10).
  decision_ = Decision::kDrawFavorsCount;
}

void State::LegalDraw(int /*p*/, std::vector<int>& out) const {
  for (int i = 0; i < static_cast<int>(kFavorDrawOptions.size()); ++i)
    if (kFavorDrawOptions[i][0] <= deck_size_) out.push_back(kDraw + i);
}

void State::OnDraw(int p, int a) {
  const int draw = kFavorDrawOptions[a - kDraw][0];
  const int keep = kFavorDrawOptions[a - kDraw][1];
  for (int i = 0; i < draw; ++i) drawn_[p] |= uint64_t{1} << deck_[--deck_size_];
  keep_left_ = keep;
  Log(event::Drew{p, draw, keep});
  decision_ = Decision::kKeepDrawnFavors;
}

void State::StartRemove(int /*p*/) {
  // Planner C (Remove a Reinforcement).
  decision_ = Decision::kRemoveReinforcementCell;
}

void State::LegalRemove(int p, std::vector<int>& out) const {
  // Any Reinforcement in the region of the player's Taskmaster.
  PushCells(*geo_, reinf_ & geo_->region_mask[region_[p]], kCell, out);
}

void State::OnRemove(int p, int a) {
  const int bit = geo_->cell_bits[a - kCell];
  reinf_ &= ~Bit(bit);
  sup_reinf_ += 1;
  Log(event::ReinforcementRemoved{p, a - kCell});
  FinishAction();
}

// ----------------------------------------------------------------- Builder (roles/builder.py)

void State::StartBuild(int p) {
  // Builder A (Build Wall): a Convict goes to the prison, then 1 or 2 blocks (C11).
  ToPrison(region_[p], 0, 1);
  decision_ = Decision::kBuildCount;
}

void State::LegalBuildCount(int p, std::vector<int>& out) const {
  for (int c = 1; c <= 2; ++c)
    if (CanBuild(p, c, jade_[p])) out.push_back(kBuildCount + c - 1);
}

void State::OnBuildCount(int p, int a) {
  const int count = a - kBuildCount + 1;
  if (count == 2) {
    PayJade(p, kDoubleBuildCost);
  }
  build_left_ = count;
  build_need_ = 0;
  Log(event::Build{p, count, count == 2 ? kDoubleBuildCost : 0});
  decision_ = Decision::kBuildCell;
}

void State::LegalBuildCell(int p, std::vector<int>& out) const {
  std::array<int, kMaxCells> bits{};
  const int k = BuildCells(occ_, p, Workers(p) - build_need_, build_left_, bits.data(), false);
  const size_t first = out.size();
  for (int i = 0; i < k; ++i) out.push_back(kCell + geo_->bit_cell[bits[i]]);
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

void State::OnBuildCell(int p, int a) {
  // E10: the block lands now and scores what it completes; the Workers are assigned after the last.
  const int bit = geo_->cell_bits[a - kCell];
  blocks_[p] -= 1;
  build_need_ += WallGeometry::WorkersFor(bit);
  build_left_ -= 1;
  PlaceBlock(p, bit, false);
  if (!build_left_) {
    worker_need_ = build_need_;
    decision_ = Decision::kAssignLaborers;
  }
}

void State::LegalLaborers(int p, std::vector<int>& out) const {
  // How many of the Workers needed are Laborers; the rest are Convicts (E11).
  const int64_t need = worker_need_;
  const int64_t low = std::max<int64_t>(0, need - convicts_[p]);
  const int64_t high = std::min(need, laborers_[p]);
  for (int64_t l = low; l <= high; ++l) out.push_back(kLaborers + static_cast<int>(l));
}

void State::OnLaborers(int p, int a) {
  PayWorkers(p, a - kLaborers);
  FinishAction();
}

void State::PayWorkers(int p, int64_t laborers) {
  // C11: all assigned Convicts and half the assigned Laborers (rounded up) die.
  const int64_t convicts = worker_need_ - laborers;
  const int64_t dead_laborers = (laborers + 1) / 2;
  convicts_[p] -= convicts;
  sup_convicts_ += convicts;
  laborers_[p] -= dead_laborers;
  sup_laborers_ += dead_laborers;
  Log(event::Workers{p, laborers, convicts, dead_laborers});
}

int State::BuildCells(Bits occ, int p, int64_t budget, int left, int* out, bool first_only) const {
  const Bits region_mask = geo_->region_mask[region_[p]];
  Bits candidates = geo_->Buildable(occ) & region_mask;
  int k = 0;
  while (candidates) {
    const int bit = LowBit(candidates);
    candidates &= candidates - 1;
    const int need = WallGeometry::WorkersFor(bit);
    if (need > budget) break;  // bits ascend by level, so every later cell costs at least as much
    // E6: the first block of two goes only where a second can follow, on a cell that exists
    // (however many Workers there are) and that the rest can pay for.
    const std::optional<int64_t> second = left == 1 ? std::nullopt : CheapestBuild(occ | Bit(bit), region_mask);
    if (left == 1 || (second && *second <= budget - need)) {
      if (first_only) return 1;
      out[k++] = bit;
    }
  }
  return k;
}

std::optional<int64_t> State::CheapestBuild(Bits occ, Bits region_mask) const {
  // Workers for the cheapest block buildable among the region's cells, none if no cell is
  // (refusals.cheapest_build). A Governor block never makes a build possible that was not
  // possible without it (E16).
  const Bits candidates = geo_->Buildable(occ) & region_mask;
  if (!candidates) return std::nullopt;
  return WallGeometry::WorkersFor(LowBit(candidates));
}

bool State::CanBuild(int p, int count, int64_t jade) const {
  if (blocks_[p] < count || (count == 2 && jade < kDoubleBuildCost)) return false;
  return BuildCells(occ_, p, Workers(p), count, nullptr, true) > 0;
}

void State::StartFavor(int /*p*/) {
  // Builder B (Play a Completed Favor Card).
  decision_ = Decision::kPlayFavorCard;
}

void State::LegalFavor(int p, std::vector<int>& out) const {
  ForEachBit(Playable(p), [&](int i) { out.push_back(kPlayFavor + i); });
}

void State::OnFavor(int p, int a) {
  const int card = a - kPlayFavor;
  favor_hand_[p] &= ~(uint64_t{1} << card);
  favor_played_[p] |= uint64_t{1} << card;  // laid on the table: public from now on
  favor_card_ = card;
  Log(event::FavorPlayed{p, card});
  if (sup_reinf_ > 0 || unlimited_) {
    decision_ = Decision::kReinforceCell;
  } else {  // E12: no Reinforcement left in the stockpile: none is placed (C7)
    FavorRewards(p, card);
  }
}

void State::LegalReinforce(int p, std::vector<int>& out) const {
  PushCells(*geo_, FavorCells(p, favor_card_), kCell, out);
}

void State::OnReinforce(int p, int a) {
  const int bit = geo_->cell_bits[a - kCell];
  reinf_ |= Bit(bit);
  sup_reinf_ -= 1;
  Log(event::Reinforced{p, a - kCell});
  FavorRewards(p, favor_card_);
}

void State::FavorRewards(int p, int card) {
  const std::array<int, kNumRewards>& r = game_->deck()[card].rewards;
  income_bonus_[p] += r[kRewardIncome];
  petition_bonus_[p] += r[kRewardPetition];
  jade_[p] += TakeJade(r[kRewardJade]);
  if (r[kRewardVp]) AddScore(p, r[kRewardVp], ScoreReason::kFavorCard);
  if (r[kRewardTreasure]) GainTreasure(p, r[kRewardTreasure], ScoreReason::kFavorCard);
  for (int i = 0; i < r[kRewardBuybackChips]; ++i) GainChip(p);
  GainConvicts(p, r[kRewardConvicts]);
  GainLaborers(p, r[kRewardLaborers]);
  const int64_t blocks = std::min<int64_t>(r[kRewardWallBlocks], stock_blocks_[p]);
  stock_blocks_[p] -= blocks;
  blocks_[p] += blocks;
  favor_card_ = -1;
  FinishAction();
}

Bits State::FavorCells(int p, int card) const {
  const FavorCard& fav = game_->deck()[card];
  Bits cells = 0;
  ForEachBit(fav.Matches(own_[p] & ~reinf_), [&](int anchor) { cells |= fav.CellsAt(anchor); });
  return cells;
}

void State::StartReplace(int /*p*/) {
  // Builder C (Replace a Built Block).
  decision_ = Decision::kReplaceCell;
}

void State::LegalReplace(int p, std::vector<int>& out) const { PushCells(*geo_, ReplaceCells(p), kCell, out); }

void State::OnReplace(int p, int a) {
  // E13: the removed block returns to its owner's supply; nothing is scored again.
  const int bit = geo_->cell_bits[a - kCell];
  const Bits b = Bit(bit);
  int victim = 0;
  while (!(own_[victim] & b)) ++victim;
  own_[victim] &= ~b;
  blocks_[victim] += 1;
  own_[p] |= b;
  blocks_[p] -= 1;
  Log(event::Replaced{p, a - kCell, victim});
  worker_need_ = kReplaceMultiplier * WallGeometry::WorkersFor(bit);
  decision_ = Decision::kAssignLaborers;
}

Bits State::ReplaceTargets(int p) const {
  // Other players' unreinforced blocks in the region of p's Taskmaster.
  const Bits mine_or_fixed = own_[p] | gov_bits_ | reinf_;
  return occ_ & ~mine_or_fixed & geo_->region_mask[region_[p]];
}

Bits State::ReplaceCells(int p) const {
  // Replace targets p has the (double) Workers for.
  const int64_t budget = Workers(p);
  Bits out = 0;
  ForEachBit(ReplaceTargets(p), [&](int bit) {
    if (kReplaceMultiplier * WallGeometry::WorkersFor(bit) <= budget) out |= Bit(bit);
  });
  return out;
}

// ----------------------------------------------------------------- Treasurer (roles/treasurer.py)

void State::CollectJade(int p) {
  // Treasurer A (Collect Jade): 3, plus 1 for every 3 Treasure held.
  const int64_t got = TakeJade(kCollectJade + treasure_[p] / kTreasurePerExtraJade);
  jade_[p] += got;
  Log(event::JadeCollected{p, got});
  FinishAction();
}

void State::StartTreasure(int /*p*/) {
  // Treasurer B (Collect a Treasure): choose the two prisons for the Convicts (C9).
  decision_ = Decision::kTreasurePrisons;
}

void State::LegalPrisons(int /*p*/, std::vector<int>& out) const {
  for (int i = 0; i < static_cast<int>(kPrisonPairs.size()); ++i)
    if (kPrisonPairs[i][1] < geo_->regions) out.push_back(kPrisons + i);
}

void State::OnPrisons(int p, int a) {
  const int r1 = kPrisonPairs[a - kPrisons][0];
  const int r2 = kPrisonPairs[a - kPrisons][1];
  convicts_[p] -= kTreasureConvicts;  // one to each of the two prisons
  prison_convicts_[r1] += 1;
  prison_convicts_[r2] += 1;
  Log(event::TreasureCollected{p, r1, r2});
  GainTreasure(p, 1, ScoreReason::kCollectTreasure);  // E7: an empty treasury gives nothing
  FinishAction();
}

// ----------------------------------------------------------------- Taskmaster (roles/taskmaster.py)

void State::StartMove(int /*p*/) {
  // Taskmaster A (Move the Taskmaster).
  decision_ = Decision::kMoveTaskmaster;
}

void State::LegalMove(int p, std::vector<int>& out) const {
  for (int r = 0; r < geo_->regions; ++r)
    if (r != region_[p]) out.push_back(kMove + r);
}

void State::OnMove(int p, int a) {
  region_[p] = a - kMove;
  Log(event::Moved{p, region_[p]});
  FinishAction();
}

}  // namespace island_fortress
