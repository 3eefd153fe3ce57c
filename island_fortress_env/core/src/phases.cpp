// The phases of a round and of the game (engine/phases/): the setup deal and keep, the Petition
// phase, the Action phase's turns, role choice, buyback and Governor block, and the game end.
#include <algorithm>

#include "rng.h"
#include "state.h"

namespace island_fortress {

// ----------------------------------------------------------------- setup (phases/setup.py)

void State::Setup() {
  const Config& cfg = game_->config();
  deck_size_ = static_cast<int>(game_->deck().size());
  for (int i = 0; i < deck_size_; ++i) deck_[i] = i;
  rng::Shuffle(rng_, deck_.data(), deck_size_);
  for (int p = 0; p < n_; ++p) {
    jade_[p] = TakeJade(kStartingJade + cfg.extra_jade);  // E2: Quicker Play from the supplies
    GainLaborers(p, cfg.start_laborers);
    GainConvicts(p, cfg.start_convicts);
    stock_blocks_[p] -= cfg.start_blocks;
    blocks_[p] = cfg.start_blocks;
    uint64_t hand = 0;
    for (int k = 0; k < kFavorDeal; ++k) hand |= uint64_t{1} << deck_[--deck_size_];
    drawn_[p] = hand;
  }
  Log(event::Setup{n_, geo_->regions});
  decision_ = Decision::kKeepDealtFavors;
  current_ = 0;
  keep_left_ = kFavorKeep;
}

void State::LegalKeep(int p, std::vector<int>& out) const {
  ForEachBit(drawn_[p], [&](int i) { out.push_back(kKeepFavor + i); });
}

void State::OnKeep(int p, int a) {
  const int card = a - kKeepFavor;
  drawn_[p] &= ~(uint64_t{1} << card);
  favor_hand_[p] |= uint64_t{1} << card;
  keep_left_ -= 1;
  if (keep_left_) return;
  std::array<int, kMaxFavorCards> rest{};
  int num_rest = 0;
  ForEachBit(drawn_[p], [&](int i) { rest[num_rest++] = i; });
  drawn_[p] = 0;
  if (decision_ == Decision::kKeepDealtFavors) {  // E1
    for (int i = 0; i < num_rest; ++i) deck_[deck_size_++] = rest[i];
    Log(event::Kept{p, kFavorKeep});
    if (p + 1 < n_) {
      current_ = p + 1;
      keep_left_ = kFavorKeep;
    } else {
      rng::Shuffle(rng_, deck_.data(), deck_size_);
      StartRound();
    }
  } else {
    rng::Shuffle(rng_, rest.data(), num_rest);  // E9: unkept cards go under, in no telling order
    std::copy_backward(deck_.begin(), deck_.begin() + deck_size_, deck_.begin() + deck_size_ + num_rest);
    std::copy(rest.begin(), rest.begin() + num_rest, deck_.begin());
    deck_size_ += num_rest;
    FinishAction();
  }
}

// ----------------------------------------------------------------- petition (phases/petition.py)

void State::StartRound() {
  round_ += 1;
  Log(event::RoundStarted{round_});
  const int start = std::max(holder_, 0);
  for (int i = 0; i < n_; ++i) {  // income, paid in turn order from the marker (C8)
    const int p = (start + i) % n_;
    const int64_t got = TakeJade(kIncome + income_bonus_[p]);
    jade_[p] += got;
    Log(event::Income{p, got});
  }
  bids_.fill(0);
  for (int i = 0; i < n_; ++i) order_[i] = (start + i) % n_;
  order_size_ = n_;
  order_pos_ = 0;
  decision_ = Decision::kPetitionBid;
  BeginBid(order_[0]);
}

void State::BeginBid(int p) {
  // `p` seals a bid: one decision per base-101 digit of the Jade held (one decision for up to
  // 100 Jade), most significant first (E3).
  current_ = p;
  int64_t jade = jade_[p];
  int digits = 0;
  while (jade > kMaxBid) {
    jade /= kBidBase;
    ++digits;
  }
  bid_digits_left_ = digits;
}

State State::BiddingStart() const {
  State other(*this, kLookAhead);
  other.bids_.fill(0);
  other.order_pos_ = 0;
  other.BeginBid(order_[0]);
  return other;
}

void State::LegalBidDigits(int p, std::vector<int>& out) const {
  // Digits that keep the bid, completed with zeros, within the Jade held.
  int64_t place = 1;
  for (int i = 0; i < bid_digits_left_; ++i) place *= kBidBase;
  const int64_t high = std::min<int64_t>(jade_[p] / place - bids_[p] * kBidBase, kMaxBid);
  for (int64_t b = 0; b <= high; ++b) out.push_back(kBid + static_cast<int>(b));
}

void State::OnBid(int p, int a) {
  bids_[p] = bids_[p] * kBidBase + (a - kBid);
  if (bid_digits_left_) {
    bid_digits_left_ -= 1;
    return;
  }
  Log(event::BidPlaced{p});
  order_pos_ += 1;
  if (order_pos_ < n_) {
    BeginBid(order_[order_pos_]);
  } else {
    ResolvePetition();
  }
}

void State::ResolvePetition() {
  std::array<int64_t, kMaxPlayers> totals{};
  int64_t best = 0;
  for (int p = 0; p < n_; ++p) {
    totals[p] = bids_[p] + petition_bonus_[p];
    best = p == 0 ? totals[p] : std::max(best, totals[p]);
  }
  // E4: highest total, then most hand Jade, then the marker moves clockwise (round 1: at random).
  std::array<int, kMaxPlayers> tied{};
  int num_tied = 0;
  for (int p = 0; p < n_; ++p)
    if (totals[p] == best) tied[num_tied++] = p;
  if (num_tied > 1) {
    int64_t most_jade = bids_[tied[0]];
    for (int i = 1; i < num_tied; ++i) most_jade = std::max(most_jade, bids_[tied[i]]);
    int k = 0;
    for (int i = 0; i < num_tied; ++i)
      if (bids_[tied[i]] == most_jade) tied[k++] = tied[i];
    num_tied = k;
  }
  int winner = tied[0];
  if (num_tied > 1) {
    if (holder_ < 0) {
      winner = tied[rng::Below(rng_, static_cast<uint64_t>(num_tied))];
    } else {  // the marker never stays with its holder
      for (int k = 1; k < n_; ++k) {
        const int q = (holder_ + k) % n_;
        if (std::find(tied.begin(), tied.begin() + num_tied, q) != tied.begin() + num_tied) {
          winner = q;
          break;
        }
      }
    }
  }
  last_bids_ = bids_;
  has_last_bids_ = true;
  const std::array<int64_t, kMaxPlayers> bids = bids_;
  bids_.fill(0);
  Log(event::Petition{{last_bids_.data(), n_}, {totals.data(), n_}, winner});
  const int64_t paid = bids[winner];
  PayJade(winner, paid);
  holder_ = winner;
  if (gov_stock_ > 0) {
    gov_stock_ -= 1;
    gov_in_hand_ = true;
  }
  ToPrison(region_[winner], 1, 1);
  if (round_ == 1 && game_->config().first_round_incentive != FirstRoundIncentive::kNone) GiveFirstRoundIncentive(winner);
  for (int p = 0; p < n_; ++p) {
    roles_hand_[p] = kAllRoles;
    roles_table_[p] = 0;
    turns_taken_[p] = 0;
  }
  turn_index_ = 0;
  StartTurn(winner);
}

void State::GiveFirstRoundIncentive(int p) {
  const FirstRoundIncentive kind = game_->config().first_round_incentive;
  if (kind == FirstRoundIncentive::kWallBlock) {  // E5: from the winner's own stockpile
    if (stock_blocks_[p] > 0) {
      stock_blocks_[p] -= 1;
      blocks_[p] += 1;
    }
  } else if (kind == FirstRoundIncentive::kBuybackChip) {
    GainChip(p);
  } else if (kind == FirstRoundIncentive::kTreasure) {
    GainTreasure(p, 1, ScoreReason::kFirstRoundIncentive);
  }
  Log(event::Incentive{p, kind});
}

// ----------------------------------------------------------------- action phase (phases/action.py)

namespace {
// Collect from Prison, Collect Jade and Move the Taskmaster are always possible (E6).
constexpr int kAlwaysFeasible = (1 << kOpCollectPrison) | (1 << kOpCollectJade) | (1 << kOpMoveTaskmaster);
constexpr int kSmallestDraw = 3;

// The role actions a hand of role cards offers.
int HandOps(int hand) {
  int ops = 0;
  for (int op = 0; op < kNumOps; ++op)
    if (hand >> kOpCard[op] & 1) ops |= 1 << op;
  return ops;
}
// The role actions Taskmaster B may repeat from a table of played cards with `jade` to pay.
int TableOps(int table, int64_t jade) {
  int ops = 0;
  for (int op = 0; op < kNumRepeatable; ++op)
    if ((table >> kOpCard[op] & 1) && jade >= kRepeatRoleCost[kOpCard[op]]) ops |= 1 << op;
  return ops;
}
}  // namespace

void State::StartTurn(int p) {
  current_ = p;
  decision_ = Decision::kChooseRoleAction;
  actions_this_turn_ = 0;
  buyback_used_ = false;
  last_card_ = -1;
  in_action_ = false;
}

void State::EndTurn() {
  const int p = current_;
  turns_taken_[p] += 1;
  if (p == holder_ && turns_taken_[p] == kTurnsPerRound && gov_in_hand_) {  // C14
    gov_in_hand_ = false;
    gov_box_ += 1;
    Log(event::GovernorLost{p});
  }
  turn_index_ += 1;
  if (turn_index_ == kTurnsPerRound * n_) {
    if (gov_stock_ == 0) {  // C15
      EndGame();
    } else {
      StartRound();
    }
  } else {
    StartTurn((holder_ + turn_index_) % n_);
  }
}

void State::FinishAction() {
  in_action_ = false;
  actions_this_turn_ += 1;
  if (wall_completer_ >= 0) {  // C15, E17
    EndGame();
    return;
  }
  decision_ = Decision::kBuybackOrEndTurn;
  std::array<int, 4> options{};
  if (TurnEndOptions(options) == 1) EndTurn();  // E14: nothing to choose but ending the turn
}

void State::LegalRole(int p, std::vector<int>& out) const {
  // The role actions of the cards in hand, and (holding the Taskmaster) Taskmaster B's repeats
  // of cards on the table the player can pay for, that can be carried out (E6, E15).
  const int hand = roles_hand_[p];
  const int in_hand = HandOps(hand);
  const int repeatable = (hand >> kTaskmaster & 1) ? TableOps(roles_table_[p], jade_[p]) : 0;
  const int feasible = FeasibleOps(p, in_hand | repeatable);
  for (int op = 0; op < kNumOps; ++op)
    if ((feasible & in_hand) >> op & 1) out.push_back(kRole + op);
  for (int op = 0; op < kNumOps; ++op)
    if ((feasible & repeatable) >> op & 1) out.push_back(kRepeat + op);
}

int State::FeasibleOps(int p, int ops) const {
  // Which role actions of `ops` can be carried out to the end (E6). None depends on Jade.
  const Bits region_mask = geo_->region_mask[region_[p]];
  const int64_t workers = Workers(p);
  int ok = ops & kAlwaysFeasible;
  const auto has = [&](int op) { return (ops >> op & 1) != 0; };
  if (has(kOpRecruit) && (sup_laborers_ >= 1 || unlimited_)) ok |= 1 << kOpRecruit;  // one Laborer costs nothing
  if (has(kOpCollectConvicts) && laborers_[p] >= kLaborersForConvicts) ok |= 1 << kOpCollectConvicts;
  if (has(kOpBuyBlocks) && stock_blocks_[p] >= 1) ok |= 1 << kOpBuyBlocks;
  if (has(kOpDrawFavors) && deck_size_ >= kSmallestDraw) ok |= 1 << kOpDrawFavors;
  if (has(kOpRemoveReinforcement) && (reinf_ & region_mask)) ok |= 1 << kOpRemoveReinforcement;
  if (has(kOpBuild) && blocks_[p] >= 1) {  // a cell must exist, however many Workers there are
    const std::optional<int64_t> cheapest = CheapestBuild(occ_, region_mask);
    if (cheapest && *cheapest <= workers) ok |= 1 << kOpBuild;
  }
  if (has(kOpPlayFavor) && favor_hand_[p] && Playable(p))
    ok |= 1 << kOpPlayFavor;
  if (has(kOpReplace) && !game_->config().no_replace && blocks_[p] >= 1) {
    const Bits targets = ReplaceTargets(p);
    if (targets && kReplaceMultiplier * WallGeometry::WorkersFor(LowBit(targets)) <= workers)
      ok |= 1 << kOpReplace;
  }
  if (has(kOpCollectTreasure) && convicts_[p] >= kTreasureConvicts) ok |= 1 << kOpCollectTreasure;
  return ok;
}

void State::OnRole(int p, int a) {
  int op;
  int card;
  int64_t cost = 0;
  if (a >= kRepeat) {  // Taskmaster B: repeat a card on the table
    op = a - kRepeat;
    card = kTaskmaster;
    // C1: Repeat Role costs Recruiter 1, Planner 2, Builder 2, Treasurer 3; the Taskmaster card itself
    // cannot be repeated.
    cost = kRepeatRoleCost[kOpCard[op]];
    PayJade(p, cost);
  } else {
    op = a - kRole;
    card = kOpCard[op];
  }
  roles_hand_[p] &= ~(1 << card);
  roles_table_[p] |= 1 << card;
  last_card_ = card;
  op_ = op;
  in_action_ = true;
  Log(event::Role{p, op, a >= kRepeat, cost});
  StartOp(op, p);
}

void State::StartOp(int op, int p) {
  switch (op) {
    case kOpRecruit: StartRecruit(p); break;
    case kOpCollectConvicts: CollectConvicts(p); break;
    case kOpCollectPrison: CollectPrison(p); break;
    case kOpBuyBlocks: StartBuy(p); break;
    case kOpDrawFavors: StartDraw(p); break;
    case kOpRemoveReinforcement: StartRemove(p); break;
    case kOpBuild: StartBuild(p); break;
    case kOpPlayFavor: StartFavor(p); break;
    case kOpReplace: StartReplace(p); break;
    case kOpCollectJade: CollectJade(p); break;
    case kOpCollectTreasure: StartTreasure(p); break;
    case kOpMoveTaskmaster: StartMove(p); break;
    default: break;
  }
}

// C2: the Taskmaster buyback (3 Jade) is offered only right after the Taskmaster card was played; a
// Buyback Chip buys back any card; at most one buyback per turn.
int State::TurnEndOptions(std::array<int, 4>& out) const {
  const int p = current_;
  int k = 0;
  out[k++] = kEndTurn;
  if (actions_this_turn_ == 1 && !buyback_used_) {
    // The hand after a buyback always holds Recruiter, Treasurer or Taskmaster (three or more
    // cards), so a second action is always possible (E14).
    if (last_card_ == kTaskmaster && jade_[p] >= kTaskmasterBuybackCost) out[k++] = kBuybackTaskmaster;
    if (chips_[p] > 0) out[k++] = kBuybackChip;
  }
  if (gov_in_hand_ && p == holder_) out[k++] = kGovernor;  // placeholder: any legal Governor cell
  return k;
}

void State::LegalTurnEnd(int /*p*/, std::vector<int>& out) const {
  std::array<int, 4> options{};
  const int k = TurnEndOptions(options);
  for (int i = 0; i < k; ++i)
    if (options[i] != kGovernor) out.push_back(options[i]);
}

void State::OnTurnEnd(int p, int a) {
  if (a == kEndTurn) {
    EndTurn();
    return;
  }
  if (a == kBuybackTaskmaster) {
    PayJade(p, kTaskmasterBuybackCost);
  } else {
    chips_[p] -= 1;
    sup_chips_ += 1;
  }
  const int card = last_card_;
  roles_table_[p] &= ~(1 << card);
  roles_hand_[p] |= 1 << card;
  buyback_used_ = true;
  Log(event::Buyback{p, card, a == kBuybackChip});
  decision_ = Decision::kChooseRoleAction;
}

void State::GovernorBits(std::vector<int>& out) const {
  // Legal Governor placements at this decision of the holder's turn (E16).
  const Bits cells = geo_->Buildable(occ_);
  if (decision_ != Decision::kBuildCount && decision_ != Decision::kBuildCell) {
    ForEachBit(cells, [&](int bit) { out.push_back(bit); });
    return;
  }
  // Keep only placements after which the started build can still be finished.
  const int p = current_;
  const Bits region_mask = geo_->region_mask[region_[p]];
  int64_t budget;
  int left;
  if (decision_ == Decision::kBuildCount) {
    budget = Workers(p);
    left = 1;
  } else {
    budget = Workers(p) - build_need_;
    left = build_left_;
  }
  ForEachBit(cells, [&](int bit) {
    if (!(Bit(bit) & region_mask) || BuildCells(occ_ | Bit(bit), p, budget, left, nullptr, true))
      out.push_back(bit);
  });
}

void State::PlaceGovernor(int p, int bit) {
  gov_in_hand_ = false;
  PlaceBlock(p, bit, true);
  if (wall_completer_ >= 0 && !in_action_) {  // E17
    EndGame();
  } else if (decision_ == Decision::kBuybackOrEndTurn) {
    std::array<int, 4> options{};
    if (TurnEndOptions(options) == 1) EndTurn();
  }
}

// ----------------------------------------------------------------- the game end (phases/end.py)

void State::EndGame() {
  if (gov_in_hand_) {  // E18: a Governor block still in hand goes to the box
    gov_in_hand_ = false;
    gov_box_ += 1;
  }
  const int w = wall_completer_;
  if (w >= 0) {  // E18: the builder of the last block empties every prison
    int64_t got_jade = 0;
    int64_t got_convicts = 0;
    for (int r = 0; r < geo_->regions; ++r) {
      got_jade += prison_jade_[r];
      got_convicts += prison_convicts_[r];
    }
    jade_[w] += got_jade;
    convicts_[w] += got_convicts;
    prison_jade_.fill(0);
    prison_convicts_.fill(0);
    Log(event::WallComplete{w, got_jade, got_convicts});
  }
  in_action_ = false;
  if (game_->config().favor_trade_in) {  // E20: from the last petition winner clockwise
    const int start = std::max(holder_, 0);
    for (int i = 0; i < n_; ++i) order_[i] = (start + i) % n_;
    order_size_ = n_;
    order_pos_ = -1;
    NextTrader();
  } else {
    FinalScoring();
  }
}

void State::NextTrader() {
  order_pos_ += 1;
  while (order_pos_ < n_ && !favor_hand_[order_[order_pos_]]) order_pos_ += 1;
  if (order_pos_ == n_) {
    FinalScoring();
  } else {
    decision_ = Decision::kFavorTradeIn;
    current_ = order_[order_pos_];
  }
}

void State::LegalTrade(int /*p*/, std::vector<int>& out) const {
  // Favor Trade-in: a card for 1 Jade or 1 Convict while the supply has one; or stop (E20).
  if (sup_jade_ > 0 || unlimited_) out.push_back(kTradeJade);
  if (sup_convicts_ > 0 || unlimited_) out.push_back(kTradeConvict);
  out.push_back(kTradeDone);
}

void State::OnTrade(int p, int a) {
  if (a == kTradeDone) {
    NextTrader();
    return;
  }
  const uint64_t hand = favor_hand_[p];
  const uint64_t low = hand & (~hand + 1);
  favor_hand_[p] = hand ^ low;
  favor_discard_ |= low;
  if (a == kTradeJade) {
    jade_[p] += TakeJade(1);
  } else {
    GainConvicts(p, 1);
  }
  Log(event::Traded{p, a == kTradeJade ? TradeReward::kJade : TradeReward::kConvict});
  if (!favor_hand_[p]) NextTrader();
}

namespace {
template <typename T>
int Most(const std::array<T, kMaxPlayers>& values, int n, std::array<int, kMaxPlayers>& out) {
  T best = values[0];
  for (int p = 1; p < n; ++p) best = std::max(best, values[p]);
  int k = 0;
  for (int p = 0; p < n; ++p)
    if (values[p] == best) out[k++] = p;
  return k;
}
template <typename T>
int Fewest(const std::array<T, kMaxPlayers>& values, int n, std::array<int, kMaxPlayers>& out) {
  T low = values[0];
  for (int p = 1; p < n; ++p) low = std::min(low, values[p]);
  int k = 0;
  for (int p = 0; p < n; ++p)
    if (values[p] == low) out[k++] = p;
  return k;
}
}  // namespace

void State::FinalScoring() {
  // E19: uncompleted rows, then uncompleted levels, then the five end-game categories.
  for (int r = 0; r < geo_->regions; ++r) {
    for (int level = 0; level < 3; ++level) {
      const Bits mask = geo_->row_mask[r][level];
      if ((occ_ & mask) != mask) ScoreRow(r, level, false);
    }
  }
  for (int level = 0; level < 3; ++level) {
    const Bits mask = geo_->level_mask[level];
    if ((occ_ & mask) != mask) ScoreLevel(level, false);
  }
  for (int p = 0; p < n_; ++p) {
    const int64_t pts = kBuybackChipPoints[std::min<int64_t>(chips_[p], kBuybackChipPoints.size() - 1)];
    if (pts) AddScore(p, pts, ScoreReason::kBuybackChips);
  }
  for (int p = 0; p < n_; ++p) {  // three points per block in the least-built region
    int least = PopCount(own_[p] & geo_->region_mask[0]);
    for (int r = 1; r < geo_->regions; ++r) least = std::min(least, PopCount(own_[p] & geo_->region_mask[r]));
    const int64_t pts = kLeastRegionMultiplier * least;
    if (pts) AddScore(p, pts, ScoreReason::kLeastBuiltRegion);
  }
  std::array<int, kMaxPlayers> who{};
  int k = Most(treasure_, n_, who);  // C16
  for (int i = 0; i < k; ++i) AddScore(who[i], kTreasureBonus, ScoreReason::kMostTreasure);
  k = Fewest(treasure_, n_, who);
  for (int i = 0; i < k; ++i) AddScore(who[i], -kTreasureBonus, ScoreReason::kFewestTreasure);
  k = Most(jade_, n_, who);  // E21
  for (int i = 0; i < k; ++i) AddScore(who[i], kJadeBonus, ScoreReason::kMostJade);
  std::array<int64_t, kMaxPlayers> workers{};
  for (int p = 0; p < n_; ++p) workers[p] = Workers(p);
  k = Most(workers, n_, who);
  for (int i = 0; i < k; ++i) AddScore(who[i], kWorkersBonus, ScoreReason::kMostWorkers);
  // C17: highest score; ties broken by blocks in the wall, then Jade, then Treasure.
  std::array<std::array<int64_t, 4>, kMaxPlayers> keys{};
  for (int p = 0; p < n_; ++p) keys[p] = {score_[p], PopCount(own_[p]), jade_[p], treasure_[p]};
  std::array<int64_t, 4> best = keys[0];
  for (int p = 1; p < n_; ++p) best = std::max(best, keys[p]);
  num_winners_ = 0;
  for (int p = 0; p < n_; ++p)
    if (keys[p] == best) winners_[num_winners_++] = p;
  if (logging_) {
    std::array<int64_t, kMaxPlayers> winners{};
    std::copy(winners_.begin(), winners_.begin() + num_winners_, winners.begin());
    Log(event::GameOver{{score_.data(), n_}, {winners.data(), num_winners_}});
  }
  decision_ = Decision::kGameOver;
  current_ = kTerminal;
}

}  // namespace island_fortress
