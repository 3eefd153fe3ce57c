// A validated configuration, the wall's geometry and the favor deck: what every state of a game shares.
// The Python engine validates the configuration and loads the deck (engine/config.py,
// engine/favors.py); the core receives them as plain data. Config (generated/config.h) is
// generated from engine/config.py's GameConfig.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bits.h"
#include "generated/config.h"
#include "generated/tables.h"

namespace island_fortress {

// One favor card: its pattern as bit offsets from the bottom-left cell, and its rewards.
// C3: the favor deck is data, loaded and validated (E27: its rewards bounded) by engine/favors.py.
struct FavorCard {
  std::vector<int> offsets;           // bit offsets of the marked cells
  Bits anchor_mask = 0;               // bottom-left positions where the pattern fits without wrapping
  std::array<int, kNumRewards> rewards{};  // in Reward order

  // Bottom-left anchors at which every marked cell is in `blocks`.
  // C4: a pattern matches in the card's orientation (no rotation or mirroring), at any height and
  // horizontal position, across region borders.
  Bits Matches(Bits blocks) const {
    Bits anchors = anchor_mask;
    for (int off : offsets) {
      anchors &= blocks >> off;
      if (!anchors) break;  // no anchor left: nothing more can match
    }
    return anchors;
  }
  // The wall cells covered by the pattern placed at `anchor`.
  Bits CellsAt(int anchor) const {
    Bits cells = 0;
    for (int off : offsets) cells |= Bit(anchor + off);
    return cells;
  }
};

// Everything about the wall that depends only on the number of regions (engine/wall.py).
struct WallGeometry {
  int regions = 0;
  Bits valid = 0;   // every cell of the wall
  Bits level0 = 0;  // the cells of level 1, which need no support
  std::array<Bits, kMaxRegions> region_mask{};                    // per region, all its cells
  std::array<std::array<Bits, 3>, kMaxRegions> row_mask{};        // [region][level 0..2]
  std::array<Bits, 3> level_mask{};                               // [level 0..2] across regions
  std::array<int, kMaxCells> cell_bits{};                         // public cell index -> bit index
  int num_cells = 0;                                              // 17 per region
  std::array<int, kGrid> bit_cell{};                              // bit index -> cell index (-1: none)
  std::array<int, kGrid> bit_region{};                            // bit index -> region

  explicit WallGeometry(int num_regions);
  static int WorkersFor(int bit) { return kWorkersPerLevel[bit / kStride]; }
  // Empty cells that have a block directly below (or stand on the ground).
  Bits Buildable(Bits occupied) const { return valid & ~occupied & (level0 | (occupied << kStride)); }
};

// The component totals of a game (engine/state.py's Game.totals).
struct Totals {
  int64_t jade, treasure, buyback_chips, reinforcements, laborers, convicts;
  int blocks_per_player, governor_blocks, favor_cards;
};

class Game {
 public:
  Game(const Config& config, std::vector<FavorCard> deck);

  const Config& config() const { return config_; }
  int num_players() const { return config_.num_players; }
  const WallGeometry& geometry() const { return geometry_; }
  const std::vector<FavorCard>& deck() const { return deck_; }
  const Totals& totals() const { return totals_; }
  int governor_blocks() const { return kGovernorBlocksByPlayers[config_.num_players]; }
  // The cards of `hand` whose pattern is complete in `blocks` (a bit set of card ids).
  uint64_t PlayableCards(uint64_t hand, Bits blocks) const;

 private:
  Config config_;                // the validated configuration
  WallGeometry geometry_;        // the wall of this table size and variant
  std::vector<FavorCard> deck_;  // the favor cards, by id
  Totals totals_;                // every component's total (unlimited supplies start at kUnlimited)
};

}  // namespace island_fortress
