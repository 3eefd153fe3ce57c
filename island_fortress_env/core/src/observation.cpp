#include "observation.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace island_fortress {

namespace {

// float32(1 / divisor), as numpy stores the Python floats 1.0 / divisor.
struct Scale {
  std::array<float, kMiddleSize> v{};
  Scale() {
    int i = 0;
    for (int s = 0; s < kMaxPlayers; ++s)
      for (int d : kPlayerDivisors) v[i++] = static_cast<float>(1.0 / d);
    for (int d : kGlobalDivisors) v[i++] = static_cast<float>(1.0 / d);
  }
};
const Scale kScale;

// Each byte's 8 bits as float32 0.0 / 1.0, lowest bit first (observation.py's _BYTE_TO_FLOATS).
struct ByteFloats {
  std::array<std::array<float, 8>, 256> v{};
  ByteFloats() {
    for (int byte = 0; byte < 256; ++byte)
      for (int b = 0; b < 8; ++b) v[byte][b] = static_cast<float>((byte >> b) & 1);
  }
};
const ByteFloats kByteFloats;

// The low `width` bits of a 64-bit word as floats, 8 at a time from the table.
void Plane64(uint64_t mask, float* out, int width) {
  int b = 0;
  for (; b + 8 <= width; b += 8) std::memcpy(out + b, kByteFloats.v[(mask >> b) & 0xFF].data(), 8 * sizeof(float));
  if (b < width) std::memcpy(out + b, kByteFloats.v[(mask >> b) & 0xFF].data(), (width - b) * sizeof(float));
}

// A wall bit set as its kGrid floats.
void Plane(Bits mask, float* out) {
  Plane64(static_cast<uint64_t>(mask), out, 64);
  Plane64(static_cast<uint64_t>(mask >> 64), out + 64, kGrid - 64);
}

}  // namespace

void EncodeObservation(const State& s, int seat, float* out) {
  const Game& game = s.game();
  const WallGeometry& geo = game.geometry();
  const Config& cfg = game.config();
  const int n = s.n();
  std::array<int, kMaxPlayers> seats{};  // me first, then the opponents in turn order
  for (int i = 0; i < n; ++i) seats[i] = (seat + i) % n;

  // Wall planes, in observation.py's WALL_PLANES order.
  float* w = out + kWallStart;
  Plane(geo.valid, w + 0 * kGrid);
  Plane(geo.Buildable(s.occ()), w + 1 * kGrid);
  for (int i = 0; i < n; ++i) Plane(s.own()[seats[i]], w + (2 + i) * kGrid);
  for (int i = n; i < kMaxPlayers; ++i) std::memset(w + (2 + i) * kGrid, 0, sizeof(float) * kGrid);  // absent seats
  Plane(s.gov_bits(), w + 6 * kGrid);
  Plane(s.reinf(), w + 7 * kGrid);
  for (int i = 0; i < n; ++i) Plane(geo.region_mask[s.region()[seats[i]]], w + (8 + i) * kGrid);
  for (int i = n; i < kMaxPlayers; ++i) std::memset(w + (8 + i) * kGrid, 0, sizeof(float) * kGrid);

  // Players (me first) and the global/decision context, as raw integers, then scaled. A count
  // beyond int32 (unlimited components) is clamped to it, as observation.py packs it.
  std::array<int32_t, kMiddleSize> v;
  int k = 0;
  // Every count fits an int32 unless the supplies are unlimited (C7): only then is it clamped.
  const bool wide = cfg.unlimited_components;
  const auto put = [&](int64_t x) {
    if (wide) x = std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    v[k++] = static_cast<int32_t>(x);
  };
  for (int i = 0; i < n; ++i) {
    const int p = seats[i];
    put(1);
    put(s.jade()[p]);
    put(s.laborers()[p]);
    put(s.convicts()[p]);
    put(s.blocks()[p]);
    put(s.stock_blocks()[p]);
    put(s.chips()[p]);
    put(s.treasure()[p]);
    put(s.score()[p]);
    put(s.income_bonus()[p]);
    put(s.petition_bonus()[p]);
    put(PopCount(s.favor_hand()[p]));
    put(PopCount(s.favor_played()[p]));
    put(PopCount(s.own()[p]));
    put(s.turns_taken()[p]);
    put(s.has_last_bids() ? s.last_bids()[p] : 0);
    put(p == s.holder());
    put(p == s.holder() && s.gov_in_hand());
    put(p == s.CurrentPlayer());
    for (int c = 0; c < 5; ++c) put(s.roles_hand()[p] >> c & 1);
    for (int c = 0; c < 5; ++c) put(s.roles_table()[p] >> c & 1);
    for (int r = 0; r < kMaxRegions; ++r) put(s.region()[p] == r);
    for (int r = 0; r < kMaxRegions; ++r) put(r < geo.regions ? PopCount(s.own()[p] & geo.region_mask[r]) : 0);
  }
  for (int i = n; i < kMaxPlayers; ++i) {  // absent seats (fixed-size blocks: plain vector stores)
    std::memset(&v[static_cast<size_t>(i * kNumPlayerFeatures)], 0, sizeof(int32_t) * kNumPlayerFeatures);
  }
  k = kMaxPlayers * kNumPlayerFeatures;
  put(s.round());
  for (int m = 2; m <= kMaxPlayers; ++m) put(n == m);
  for (int r = 2; r <= kMaxRegions; ++r) put(geo.regions == r);
  static_assert(kFirstOptionFeature == 1 + (kMaxPlayers - 1) + (kMaxRegions - 1), "the options follow the regions");
  for (bool Config::*option : kObservedOptions) put(cfg.*option);
  put(s.gov_stock());
  put(s.deck_size());
  if (cfg.unlimited_components) {  // an unlimited supply never runs out: shown as a full box
    for (int b : {kComponentsJade, kComponentsTreasure, kComponentsBuybackChips, kComponentsReinforcements,
                  kComponentsLaborers, kComponentsConvicts})
      put(b);
  } else {
    put(s.sup_jade());
    put(s.sup_treasure());
    put(s.sup_chips());
    put(s.sup_reinf());
    put(s.sup_laborers());
    put(s.sup_convicts());
  }
  for (int r = 0; r < kMaxRegions; ++r) put(r < geo.regions ? s.prison_jade()[r] : 0);
  for (int r = 0; r < kMaxRegions; ++r) put(r < geo.regions ? s.prison_convicts()[r] : 0);
  const int d = static_cast<int>(s.decision());
  for (int i = 0; i < kNumDecisions; ++i) put(i == d);
  const int op = s.in_action() && s.op() >= 0 ? s.op() : -1;
  for (int i = 0; i < kNumOps; ++i) put(i == op);
  const bool bidding = s.decision() == Decision::kPetitionBid;
  bool my_bid = false;
  if (bidding)
    for (int i = 0; i < std::min(s.order_pos(), s.order_size()); ++i) my_bid = my_bid || s.order()[i] == seat;
  // A sealed bid, complete or partly entered, is shown to its bidder only (E3).
  const int64_t sealed = bidding && (my_bid || seat == s.CurrentPlayer()) ? s.bids()[seat] : 0;
  put(s.actions_this_turn());
  put(s.buyback_used());
  put(s.build_left());
  put(s.build_need());
  put(s.worker_need());
  put(s.keep_left() + s.bid_digits_left());
  put(sealed);
  put(my_bid);

  float* middle = out + kPlayersStart;
  for (int i = 0; i < kMiddleSize; ++i) middle[i] = static_cast<float>(v[i]) * kScale.v[i];

  // This seat's card sets and the public played cards.
  const uint64_t hand = s.favor_hand()[seat];
  uint64_t played = 0;
  for (int p = 0; p < n; ++p) played |= s.favor_played()[p];
  const uint64_t playable = s.Playable(seat);
  float* cards = out + kPrivateStart;
  Plane64(hand, cards, kMaxFavorCards);
  Plane64(s.drawn()[seat], cards + kMaxFavorCards, kMaxFavorCards);
  Plane64(playable, cards + 2 * kMaxFavorCards, kMaxFavorCards);
  Plane64(played, cards + 3 * kMaxFavorCards, kMaxFavorCards);

  // E27: whatever a game reaches, every observation is clipped into its Box(-1, 10).
  // Unlimited supplies or another deck can take a count past the Box: then clip.
  if (cfg.unlimited_components || cfg.favor_deck)
    for (int i = 0; i < kObsSize; ++i) out[i] = std::clamp(out[i], kObsLow, kObsHigh);
}

void EncodeActionMask(const State& state, uint8_t* out) {
  std::memset(out, 0, kNumActions);
  for (int a : state.LegalActions()) out[a] = 1;
}

void EncodeGlobalState(const State& s, float* out) {
  std::memset(out, 0, sizeof(float) * kStateSize);
  for (int seat = 0; seat < s.n(); ++seat) EncodeObservation(s, seat, out + seat * kObsSize);
  const int size = s.deck_size();
  for (int index = 0; index < size; ++index) {  // the deck's top is the end
    const int card = s.deck()[index];
    out[kDeckStart + card] = 1.0F;
    out[kPositionStart + card] = static_cast<float>(static_cast<double>(size - index) / kMaxFavorCards);
  }
  if (!s.IsTerminal()) out[kToMoveStart + s.CurrentPlayer()] = 1.0F;
}

}  // namespace island_fortress
