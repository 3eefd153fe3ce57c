// The complete rules of Island Fortress as a phase machine: the C++ twin of engine/state.py.
//
// The state always waits on one decision of one player (CurrentPlayer()). A role action with
// several choices is a short stack of decisions (decision_ plus a little context such as
// build_left_), so every decision is one id of the flat action table (tables.h). Each decision
// has one legal/apply pair, dispatched by a switch on the decision (LegalActions, ApplyAction).
// The Governor block is one more family of legal actions at every decision of its holder's turns;
// a pass exists only when nothing else is legal. Rulings are cited by their docs/RULES.md ids.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "bits.h"
#include "game.h"
#include "generated/enums.h"
#include "generated/tables.h"

namespace island_fortress {

// Two sums of a game's event log, kept with logging off too (a batch reports them when a game
// ends): each seat's points by ScoreReason (its Score events), and the Jade it paid to the supply
// (its petition bid as winner, Recruit, Buy Blocks, a double build, a repeated role, a Taskmaster
// buyback).
struct Tallies {
  std::array<std::array<int64_t, kNumScoreReasons>, kMaxPlayers> points_by_reason{};
  std::array<int64_t, kMaxPlayers> jade_spent{};
};

// The fields of a game: everything a State is, apart from its event log and its memo of legal
// actions (State below), so that a look-ahead copy can copy them alone.
class StateData {
 protected:
  StateData(std::shared_ptr<const Game> game, uint64_t seed)
      : game_(std::move(game)),
        geo_(&game_->geometry()),
        n_(game_->num_players()),
        unlimited_(game_->config().unlimited_components),
        rng_(seed) {}

  std::shared_ptr<const Game> game_;  // the configuration, wall geometry and favor deck
  const WallGeometry* geo_;           // game_'s wall (a shortcut)
  int n_;                             // number of players
  bool unlimited_;                    // supplies that never run out (C7)
  uint64_t rng_;                      // SplitMix64 state: the deck shuffles and round 1's petition tie
  // players (one entry per seat)
  std::array<int64_t, kMaxPlayers> jade_{};            // Jade held
  std::array<int64_t, kMaxPlayers> laborers_{};        // Laborers held
  std::array<int64_t, kMaxPlayers> convicts_{};        // Convicts held
  std::array<int64_t, kMaxPlayers> blocks_{};          // Wall Blocks in the player's supply
  std::array<int64_t, kMaxPlayers> stock_blocks_{};    // Wall Blocks left in the player's stockpile
  std::array<int64_t, kMaxPlayers> chips_{};           // Buyback Chips
  std::array<int64_t, kMaxPlayers> treasure_{};        // Treasure
  std::array<int64_t, kMaxPlayers> score_{};           // victory points
  std::array<int64_t, kMaxPlayers> income_bonus_{};    // favor income added each round
  std::array<int64_t, kMaxPlayers> petition_bonus_{};  // favor bonus added to every bid
  std::array<int, kMaxPlayers> region_{};              // the region of each Taskmaster
  std::array<int, kMaxPlayers> roles_hand_{};          // role cards in hand (bit set)
  std::array<int, kMaxPlayers> roles_table_{};         // role cards played this round (bit set)
  std::array<uint64_t, kMaxPlayers> favor_hand_{};     // favor cards in hand (bit set of ids)
  std::array<uint64_t, kMaxPlayers> favor_played_{};   // favor cards laid on the table
  std::array<uint64_t, kMaxPlayers> drawn_{};          // cards dealt or drawn, not yet kept
  std::array<int, kMaxPlayers> turns_taken_{};         // action-phase turns taken this round
  std::array<int64_t, kMaxPlayers> bids_{};            // sealed bids (partial while entered by digits)
  std::array<int64_t, kMaxPlayers> last_bids_{};       // the bids revealed at the last petition
  bool has_last_bids_ = false;                         // whether a petition was resolved yet
  // the wall, as bit sets
  Bits occ_ = 0;                           // every occupied cell
  std::array<Bits, kMaxPlayers> own_{};    // each player's blocks
  Bits gov_bits_ = 0;                      // Governor blocks
  Bits reinf_ = 0;                         // reinforced blocks
  // supplies (an unlimited one is a ledger: C7), prisons, the favor deck
  int64_t sup_jade_, sup_treasure_, sup_chips_, sup_reinf_, sup_laborers_, sup_convicts_;
  int gov_stock_;                                      // Governor blocks left in the stockpile
  int gov_box_ = 0;                                    // Governor blocks gone to the box unplaced
  bool gov_in_hand_ = false;                           // the holder has a Governor block to place
  std::array<int64_t, kMaxRegions> prison_jade_{};     // Jade in each region's prison
  std::array<int64_t, kMaxRegions> prison_convicts_{}; // Convicts in each region's prison
  std::array<int, kMaxFavorCards> deck_{};             // favor card ids, top last
  int deck_size_ = 0;                                  // cards in deck_
  uint64_t favor_discard_ = 0;                         // cards traded in (Favor Trade-in)
  // turn structure and the pending decision
  int round_ = 0;                                  // the round (0 during the setup)
  Decision decision_ = Decision::kKeepDealtFavors;  // the pending decision
  int current_ = 0;                                // the player to decide (kTerminal at the end)
  int holder_ = -1;                                // the Governor marker's holder (-1 before round 1's petition)
  int turn_index_ = 0;                             // action-phase turns played this round
  int actions_this_turn_ = 0;                      // role actions finished this turn
  bool buyback_used_ = false;                      // a buyback was taken this turn
  int last_card_ = -1;                             // the role card played last this turn
  bool in_action_ = false;                         // a role action is under way
  int keep_left_ = 0;                              // favor cards still to keep
  int op_ = -1;                                    // the role action under way (Op), or the last one
  int build_left_ = 0;                             // blocks still to place in this build
  int64_t build_need_ = 0;                         // Workers the blocks placed so far need
  int64_t worker_need_ = 0;                        // Workers to assign now
  int favor_card_ = -1;                            // the favor card being played
  std::array<int, kMaxPlayers> order_{};           // bidding or trade-in order
  int order_size_ = 0;                             // entries of order_ (0 before the first round)
  int order_pos_ = 0;                              // position in order_
  int wall_completer_ = -1;                        // who filled the last cell (-1: nobody yet)
  std::array<int, kMaxPlayers> winners_{};         // the winners, once the game is over
  int num_winners_ = 0;                            // entries of winners_
  int bid_digits_left_ = 0;                        // base-101 digits of the bid still to enter after this one (E3)
};

class State : private StateData {
 public:
  // A copy of `other` for an agent's look-ahead: the same game fields, no event log (and none
  // recorded) nor its Tallies, the legal actions computed again when asked.
  enum LookAhead { kLookAhead };
  State(const State& other, LookAhead) : StateData(other), logging_(false), recording_(false), seed_(other.seed_) {}
  State(std::shared_ptr<const Game> game, uint64_t seed);

  // What made a state from the first state of its game and seed, oldest first, one entry per
  // action applied (its id) and, for a copy made by WithBlock or RedealUnseen, the operation and
  // its arguments: kHistoryWithBlock, cell, player, governor; or kHistoryRedeal, seat and the
  // seed's four 16-bit words, lowest first. Replay makes the state again from it (to pickle a
  // state as its game, seed and history). Look-ahead copies record none.
  static constexpr int16_t kHistoryWithBlock = -1;
  static constexpr int16_t kHistoryRedeal = -2;
  const std::vector<int16_t>& history() const { return history_; }
  uint64_t seed() const { return seed_; }  // the seed of the game's first state
  // The state `history` makes from the first state of `game` and `seed`, recording events when
  // `logging`; std::invalid_argument naming the first entry that is no legal step from the
  // state before it (an illegal action, an index out of range, an unknown or cut-short operation).
  static State Replay(std::shared_ptr<const Game> game, uint64_t seed, const std::vector<int16_t>& history,
                      bool logging);

  // --- the public API (engine/state.py)
  int CurrentPlayer() const { return current_; }
  bool IsTerminal() const { return decision_ == Decision::kGameOver; }
  // Sorted legal action ids for the current player (never empty before the end).
  const std::vector<int>& LegalActions() const;
  bool IsLegal(int64_t action) const;
  // Applies a legal action and returns true; an illegal one changes nothing and returns false.
  bool ApplyAction(int64_t action);
  // Applies `action`, which must be one of LegalActions() (an agent's look-ahead applies the
  // choices it was offered): no check.
  void ApplyLegalAction(int action) {
    legal_valid_ = false;
    if (recording_) history_.push_back(static_cast<int16_t>(action));
    Apply(action);
  }
  // Zero-sum win/loss returns at the end; zeros before.
  std::array<double, kMaxPlayers> Returns() const;
  // A copy of this state with a block put on `cell` as the rules put one, scoring what it
  // completes (for an agent's look-ahead; the pending decision stays this state's). `cell` is a
  // cell of the wall and `player` a seat (the caller checks them).
  State WithBlock(int cell, int player, bool governor) const;
  // A copy that `seat` cannot tell from this state, everything `seat` cannot see drawn again from
  // the SplitMix64 generator seeded by `seed` (engine/visibility.py's redeal_unseen: C13, E3, E25):
  // the unseen favor cards dealt again in the same counts, the other players' sealed bids (and a
  // bid being entered) drawn again within their Jade, and the copy's generator reseeded.
  State RedealUnseen(int seat, uint64_t seed) const;
  // For a look-ahead (the batched search): a look-ahead copy of a state within a round's bidding
  // as it stood at the round's first bid, every bid sealed since taken back (they change nothing
  // else: E3). No seat can tell the two apart but by the bids, which none of them sees.
  State BiddingStart() const;
  // Stops (or resumes) recording the event log; look-ahead copies and batched games need none.
  void set_logging(bool on) { logging_ = on; }
  bool logging() const { return logging_; }

  // --- read access for the observation encoder, the heuristic and the bindings
  const Game& game() const { return *game_; }
  const std::shared_ptr<const Game>& game_ptr() const { return game_; }
  int n() const { return n_; }
  uint64_t rng() const { return rng_; }
  const std::array<int64_t, kMaxPlayers>& jade() const { return jade_; }
  const std::array<int64_t, kMaxPlayers>& laborers() const { return laborers_; }
  const std::array<int64_t, kMaxPlayers>& convicts() const { return convicts_; }
  const std::array<int64_t, kMaxPlayers>& blocks() const { return blocks_; }
  const std::array<int64_t, kMaxPlayers>& stock_blocks() const { return stock_blocks_; }
  const std::array<int64_t, kMaxPlayers>& chips() const { return chips_; }
  const std::array<int64_t, kMaxPlayers>& treasure() const { return treasure_; }
  const std::array<int64_t, kMaxPlayers>& score() const { return score_; }
  const std::array<int64_t, kMaxPlayers>& income_bonus() const { return income_bonus_; }
  const std::array<int64_t, kMaxPlayers>& petition_bonus() const { return petition_bonus_; }
  const std::array<int, kMaxPlayers>& region() const { return region_; }
  const std::array<int, kMaxPlayers>& roles_hand() const { return roles_hand_; }
  const std::array<int, kMaxPlayers>& roles_table() const { return roles_table_; }
  const std::array<uint64_t, kMaxPlayers>& favor_hand() const { return favor_hand_; }
  const std::array<uint64_t, kMaxPlayers>& favor_played() const { return favor_played_; }
  const std::array<uint64_t, kMaxPlayers>& drawn() const { return drawn_; }
  const std::array<int, kMaxPlayers>& turns_taken() const { return turns_taken_; }
  const std::array<int64_t, kMaxPlayers>& bids() const { return bids_; }
  bool has_last_bids() const { return has_last_bids_; }
  const std::array<int64_t, kMaxPlayers>& last_bids() const { return last_bids_; }
  Bits occ() const { return occ_; }
  const std::array<Bits, kMaxPlayers>& own() const { return own_; }
  Bits gov_bits() const { return gov_bits_; }
  Bits reinf() const { return reinf_; }
  int64_t sup_jade() const { return sup_jade_; }
  int64_t sup_treasure() const { return sup_treasure_; }
  int64_t sup_chips() const { return sup_chips_; }
  int64_t sup_reinf() const { return sup_reinf_; }
  int64_t sup_laborers() const { return sup_laborers_; }
  int64_t sup_convicts() const { return sup_convicts_; }
  int gov_stock() const { return gov_stock_; }
  int gov_box() const { return gov_box_; }
  bool gov_in_hand() const { return gov_in_hand_; }
  const std::array<int64_t, kMaxRegions>& prison_jade() const { return prison_jade_; }
  const std::array<int64_t, kMaxRegions>& prison_convicts() const { return prison_convicts_; }
  const std::array<int, kMaxFavorCards>& deck() const { return deck_; }
  int deck_size() const { return deck_size_; }
  uint64_t favor_discard() const { return favor_discard_; }
  int round() const { return round_; }
  Decision decision() const { return decision_; }
  int holder() const { return holder_; }
  int turn_index() const { return turn_index_; }
  int actions_this_turn() const { return actions_this_turn_; }
  bool buyback_used() const { return buyback_used_; }
  int last_card() const { return last_card_; }
  bool in_action() const { return in_action_; }
  int keep_left() const { return keep_left_; }
  int op() const { return op_; }
  int build_left() const { return build_left_; }
  int64_t build_need() const { return build_need_; }
  int64_t worker_need() const { return worker_need_; }
  int favor_card() const { return favor_card_; }
  const std::array<int, kMaxPlayers>& order() const { return order_; }
  int order_size() const { return order_size_; }
  int order_pos() const { return order_pos_; }
  int wall_completer() const { return wall_completer_; }
  const std::array<int, kMaxPlayers>& winners() const { return winners_; }
  int num_winners() const { return num_winners_; }
  int bid_digits_left() const { return bid_digits_left_; }
  bool unlimited() const { return unlimited_; }
  // The event log: records of [kind, field count, fields...], oldest first.
  const std::vector<int64_t>& log() const { return log_; }
  // The sums of the event log (Tallies); null in a look-ahead copy, which keeps none.
  const Tallies* tallies() const { return tallies_ ? &*tallies_ : nullptr; }
  int64_t Workers(int p) const { return laborers_[p] + convicts_[p]; }
  // The cards of `p`'s favor hand whose pattern is complete in its unreinforced blocks
  // (Game::PlayableCards), remembered per seat until its hand or blocks change: the legal role
  // actions and every observation of the seat ask it again and again.
  uint64_t Playable(int p) const {
    const uint64_t hand = favor_hand_[p];
    const Bits blocks = own_[p] & ~reinf_;
    Memo& memo = playable_[static_cast<size_t>(p)];
    if (hand != memo.hand || blocks != memo.blocks) {
      memo.hand = hand;
      memo.blocks = blocks;
      memo.cards = game_->PlayableCards(hand, blocks);
    }
    return memo.cards;
  }

 private:
  // --- dispatch
  void ComputeLegal(std::vector<int>& out) const;
  void Apply(int a);

  // --- moves of components every phase shares (engine/fields.py)
  int64_t TakeJade(int64_t amount);
  void PayJade(int p, int64_t amount);  // p pays `amount` to the supply
  void AddScore(int p, int64_t points, ScoreReason reason, int region = -1, int level = -1);
  void ToPrison(int region, int64_t jade, int64_t convicts);
  void GainChip(int p);
  void GainTreasure(int p, int64_t amount, ScoreReason reason, int level = -1);
  void GainLaborers(int p, int64_t amount);
  void GainConvicts(int p, int64_t amount);
  void PlaceBlock(int p, int bit, bool governor);
  void ScoreRow(int region, int level, bool completed);
  void ScoreLevel(int level, bool completed);
  // Appends an event record (generated/enums.h's event::*, engine/events.py's field order).
  template <typename Record>
  void Log(const Record& record) {
    if (logging_) record.AppendTo(log_);
  }

  // --- setup (phases/setup.py): the deal, and the keep decision Draw Favor Cards shares
  void Setup();
  void LegalKeep(int p, std::vector<int>& out) const;
  void OnKeep(int p, int a);

  // --- petition (phases/petition.py)
  void StartRound();
  void BeginBid(int p);
  void LegalBidDigits(int p, std::vector<int>& out) const;
  void OnBid(int p, int a);
  void ResolvePetition();
  void GiveFirstRoundIncentive(int p);

  // --- action phase (phases/action.py)
  void StartTurn(int p);
  void EndTurn();
  void FinishAction();
  void LegalRole(int p, std::vector<int>& out) const;
  int FeasibleOps(int p, int ops) const;
  void OnRole(int p, int a);
  int TurnEndOptions(std::array<int, 4>& out) const;
  void LegalTurnEnd(int p, std::vector<int>& out) const;
  void OnTurnEnd(int p, int a);
  void GovernorBits(std::vector<int>& out) const;
  void PlaceGovernor(int p, int bit);

  // --- end of the game (phases/end.py)
  void EndGame();
  void NextTrader();
  void LegalTrade(int p, std::vector<int>& out) const;
  void OnTrade(int p, int a);
  void FinalScoring();

  // --- Recruiter (roles/recruiter.py)
  void StartRecruit(int p);
  void LegalRecruit(int p, std::vector<int>& out) const;
  void OnRecruit(int p, int a);
  void CollectConvicts(int p);
  void CollectPrison(int p);
  // --- Planner (roles/planner.py)
  void StartBuy(int p);
  void LegalBuy(int p, std::vector<int>& out) const;
  void OnBuy(int p, int a);
  void StartDraw(int p);
  void LegalDraw(int p, std::vector<int>& out) const;
  void OnDraw(int p, int a);
  void StartRemove(int p);
  void LegalRemove(int p, std::vector<int>& out) const;
  void OnRemove(int p, int a);
  // --- Builder (roles/builder.py)
  void StartBuild(int p);
  void LegalBuildCount(int p, std::vector<int>& out) const;
  void OnBuildCount(int p, int a);
  void LegalBuildCell(int p, std::vector<int>& out) const;
  void OnBuildCell(int p, int a);
  void LegalLaborers(int p, std::vector<int>& out) const;
  void OnLaborers(int p, int a);
  void PayWorkers(int p, int64_t laborers);
  // Cells (bit indexes, ascending) where the next block of a build may go so the build can finish;
  // with `first_only`, stops at the first one (an existence test).
  int BuildCells(Bits occ, int p, int64_t budget, int left, int* out, bool first_only) const;
  std::optional<int64_t> CheapestBuild(Bits occ, Bits region_mask) const;
  bool CanBuild(int p, int count, int64_t jade) const;
  void StartFavor(int p);
  void LegalFavor(int p, std::vector<int>& out) const;
  void OnFavor(int p, int a);
  void LegalReinforce(int p, std::vector<int>& out) const;
  void OnReinforce(int p, int a);
  void FavorRewards(int p, int card);
  Bits FavorCells(int p, int card) const;
  void StartReplace(int p);
  void LegalReplace(int p, std::vector<int>& out) const;
  void OnReplace(int p, int a);
  Bits ReplaceTargets(int p) const;
  Bits ReplaceCells(int p) const;
  // --- Treasurer (roles/treasurer.py)
  void CollectJade(int p);
  void StartTreasure(int p);
  void LegalPrisons(int p, std::vector<int>& out) const;
  void OnPrisons(int p, int a);
  // --- Taskmaster (roles/taskmaster.py)
  void StartMove(int p);
  void LegalMove(int p, std::vector<int>& out) const;
  void OnMove(int p, int a);
  void StartOp(int op, int p);

  bool logging_ = true;                            // whether events are recorded
  bool recording_ = true;                          // whether history_ is recorded
  uint64_t seed_ = 0;                              // the seed of the game's first state
  std::vector<int16_t> history_;                   // what made this state from that one (history())
  std::vector<int64_t> log_;                       // the event log: [kind, count, fields...] records
  std::optional<Tallies> tallies_;                 // tallies() (empty in a look-ahead copy)
  mutable std::vector<int> legal_;                 // the memoised legal actions
  mutable bool legal_valid_ = false;               // whether legal_ is for the pending decision
  struct Memo {                                    // Playable's last question and answer for a seat
    uint64_t hand = 0;                             // (no cards: none playable)
    Bits blocks = 0;
    uint64_t cards = 0;
  };
  mutable std::array<Memo, kMaxPlayers> playable_{};
};

}  // namespace island_fortress
