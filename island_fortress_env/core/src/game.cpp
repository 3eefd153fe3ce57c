#include "game.h"

#include <stdexcept>
#include <utility>

namespace island_fortress {

namespace {
int BitOf(int level, int column) { return level * kStride + column; }
}  // namespace

// C5: a region is 3 rows of 5 plus 2 tower cells on level 4 above its end columns (17 cells);
// regions lie edge to edge as one continuous wall; a level is the same row across all regions.
WallGeometry::WallGeometry(int num_regions) : regions(num_regions) {
  if (num_regions < 1 || num_regions > kMaxRegions) throw std::invalid_argument("a wall has 1..4 regions");
  bit_cell.fill(-1);
  bit_region.fill(-1);
  for (int r = 0; r < regions; ++r) {
    // The 17 cells of a region in public order: level 1 left to right, ..., then the towers.
    const int base = r * kColumnsPerRegion;
    std::array<int, kCellsPerRegion> bits{};
    int k = 0;
    for (int level = 0; level < 3; ++level)
      for (int c = 0; c < kColumnsPerRegion; ++c) bits[k++] = BitOf(level, base + c);
    bits[k++] = BitOf(3, base);
    bits[k++] = BitOf(3, base + kColumnsPerRegion - 1);
    for (int i = 0; i < kCellsPerRegion; ++i) {
      const int b = bits[i];
      cell_bits[num_cells] = b;
      bit_cell[b] = num_cells;
      bit_region[b] = (b % kStride) / kColumnsPerRegion;
      ++num_cells;
      region_mask[r] |= Bit(b);
    }
    for (int level = 0; level < 3; ++level)
      for (int c = 0; c < kColumnsPerRegion; ++c)
        row_mask[r][level] |= Bit(bits[level * 5 + c]);
  }
  for (int r = 0; r < regions; ++r) {
    valid |= region_mask[r];
    for (int level = 0; level < 3; ++level)
      level_mask[level] |= row_mask[r][level];
  }
  level0 = level_mask[0];
}

Game::Game(const Config& config, std::vector<FavorCard> deck)
    : config_(config),
      geometry_(kRegionsByPlayers[config.num_players] + (config.extra_region ? 1 : 0)),
      deck_(std::move(deck)) {
  const auto limit = [&](int64_t n) { return config_.unlimited_components ? kUnlimited : n; };
  totals_ = Totals{limit(kComponentsJade),
                   limit(kComponentsTreasure),
                   limit(kComponentsBuybackChips),
                   limit(kComponentsReinforcements),
                   limit(kComponentsLaborers),
                   limit(kComponentsConvicts),
                   kComponentsBlocksPerPlayer,
                   governor_blocks(),
                   static_cast<int>(deck_.size())};
}

uint64_t Game::PlayableCards(uint64_t hand, Bits blocks) const {
  uint64_t found = 0;
  const auto have = static_cast<size_t>(PopCount(blocks));
  ForEachBit(hand, [&](int i) {
    const FavorCard& card = deck_[static_cast<size_t>(i)];
    // A pattern of more cells than there are blocks cannot be complete.
    if (card.offsets.size() <= have && card.Matches(blocks)) found |= uint64_t{1} << i;
  });
  return found;
}

}  // namespace island_fortress
