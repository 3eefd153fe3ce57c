// The rulebook's numbers (engine/data/rules_tables.json) and the action table (engine/actions.py).
// The bindings expose them so a test checks every value against the Python engine's tables.
#pragma once

#include <array>
#include <cstdint>

namespace island_fortress {

// --- engine/data/rules_tables.json
inline constexpr std::array<int, 6> kPurchaseCost = {0, 0, 1, 2, 4, 6};  // index = count bought
inline constexpr std::array<int, 4> kWorkersPerLevel = {2, 4, 6, 8};     // index = level - 1
inline constexpr int kReplaceMultiplier = 2;
inline constexpr int kDoubleBuildCost = 1;
// Repeat cost by role card (Recruiter, Planner, Builder, Treasurer); the Taskmaster cannot be repeated.
inline constexpr std::array<int, 4> kRepeatRoleCost = {1, 2, 2, 3};
inline constexpr int kTaskmasterBuybackCost = 3;
inline constexpr std::array<int, 3> kRowPoints = {3, 6, 10};
inline constexpr int kTowerPoints = 5;
inline constexpr std::array<int, 5> kBuybackChipPoints = {0, 1, 3, 6, 10};
inline constexpr int kLeastRegionMultiplier = 3;
inline constexpr int kTreasureBonus = 3;
inline constexpr int kJadeBonus = 3;
inline constexpr int kWorkersBonus = 3;
inline constexpr int kIncome = 3;
inline constexpr int kCollectJade = 3;
inline constexpr int kTreasurePerExtraJade = 3;
inline constexpr int kConvictsCollected = 6;
inline constexpr int kLaborersForConvicts = 2;
inline constexpr int kStartingJade = 12;
inline constexpr int kFavorDeal = 5;
inline constexpr int kFavorKeep = 3;
inline constexpr std::array<int, 5> kRegionsByPlayers = {0, 0, 2, 2, 3};         // index = players
inline constexpr std::array<int, 5> kGovernorBlocksByPlayers = {0, 0, 12, 12, 11};  // index = players
inline constexpr int kBoxJade = 100;
inline constexpr int kBoxTreasure = 102;
inline constexpr int kBoxBuybackChips = 18;
inline constexpr int kBoxReinforcements = 18;
inline constexpr int kBoxLaborers = 45;
inline constexpr int kBoxConvicts = 75;
inline constexpr int kBlocksPerPlayer = 18;
inline constexpr int kMaxBid = 100;              // the largest one-decision bid
inline constexpr int kBidBase = kMaxBid + 1;     // a larger bid is entered as digits in this base (E3)
inline constexpr int kTurnsPerRound = 3;         // action-phase turns of each player a round
inline constexpr std::array<std::array<int, 2>, 2> kFavorDrawOptions = {{{3, 2}, {5, 1}}};  // (draw, keep)
inline constexpr int kTreasureConvicts = 2;      // Convicts Collect a Treasure sends to prisons
inline constexpr int kMaxPurchase = 5;           // Recruit / Buy: 1..5 at a time

inline constexpr int kMinPlayers = 2;
inline constexpr int kMaxPlayers = 4;
inline constexpr int kMaxRegions = 4;
inline constexpr int kMaxFavorCards = 36;
inline constexpr int64_t kUnlimited = 1000000000;  // where an unlimited supply's ledger starts (C7)

// --- engine/wall.py
inline constexpr int kStride = 20;  // columns per level in the bit layout
inline constexpr int kLevels = 4;
inline constexpr int kColumnsPerRegion = 5;
inline constexpr int kCellsPerRegion = 3 * kColumnsPerRegion + 2;  // 17
inline constexpr int kMaxCells = kMaxRegions * kCellsPerRegion;    // 68
inline constexpr int kGrid = kLevels * kStride;                    // 80 bit positions

// --- engine/actions.py: role cards, role actions ("ops") and the flat action table.
enum RoleCard : int { kRecruiter = 0, kPlanner, kBuilder, kTreasurer, kTaskmaster };
inline constexpr int kAllRoles = (1 << 5) - 1;
enum Op : int {
  kOpRecruit = 0,
  kOpCollectConvicts,
  kOpCollectPrison,
  kOpBuyBlocks,
  kOpDrawFavors,
  kOpRemoveReinforcement,
  kOpBuild,
  kOpPlayFavor,
  kOpReplace,
  kOpCollectJade,
  kOpCollectTreasure,
  kOpMoveTaskmaster,
};
inline constexpr int kNumOps = 12;
inline constexpr int kNumRepeatable = 11;  // every action but Move the Taskmaster
inline constexpr std::array<int, kNumOps> kOpCard = {
    kRecruiter, kRecruiter, kRecruiter, kPlanner,   kPlanner,   kPlanner,
    kBuilder,   kBuilder,   kBuilder,   kTreasurer, kTreasurer, kTaskmaster};
inline constexpr int kMaxWorkers = 16;  // two level-4 blocks, or replacing a level-4 block
// Unordered pairs of distinct prisons, for Collect a Treasure.
inline constexpr std::array<std::array<int, 2>, 6> kPrisonPairs = {{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};

// The first id of each action family (ACTION_FAMILIES, in order).
inline constexpr int kPass = 0;
inline constexpr int kEndTurn = 1;
inline constexpr int kBuybackTaskmaster = 2;
inline constexpr int kBuybackChip = 3;
inline constexpr int kKeepFavor = 4;
inline constexpr int kBid = kKeepFavor + kMaxFavorCards;          // 40
inline constexpr int kRole = kBid + kMaxBid + 1;                  // 141
inline constexpr int kRepeat = kRole + kNumOps;                   // 153
inline constexpr int kRecruitCount = kRepeat + kNumRepeatable;    // 164
inline constexpr int kBuyCount = kRecruitCount + kMaxPurchase;    // 169
inline constexpr int kDrawCount = kBuyCount + kMaxPurchase;       // 174
inline constexpr int kBuildCount = kDrawCount + 2;                // 176
inline constexpr int kCell = kBuildCount + 2;                     // 178
inline constexpr int kGovernor = kCell + kMaxCells;               // 246
inline constexpr int kLaborers = kGovernor + kMaxCells;           // 314
inline constexpr int kMoveRegion = kLaborers + kMaxWorkers + 1;   // 331
inline constexpr int kPrisonPair = kMoveRegion + kMaxRegions;     // 335
inline constexpr int kPlayFavor = kPrisonPair + 6;                // 341
inline constexpr int kTradeJade = kPlayFavor + kMaxFavorCards;    // 377
inline constexpr int kTradeConvict = kTradeJade + 1;              // 378
inline constexpr int kTradeDone = kTradeConvict + 1;              // 379
inline constexpr int kNumActions = kTradeDone + 1;                // 380

// Favor card rewards, in engine/favors.py's REWARD_KINDS order.
enum Reward : int {
  kRewardIncome = 0,
  kRewardPetition,
  kRewardJade,
  kRewardVp,
  kRewardTreasure,
  kRewardBuybackChips,
  kRewardConvicts,
  kRewardLaborers,
  kRewardWallBlocks,
};
inline constexpr int kNumRewards = 9;

}  // namespace island_fortress
