// The rule-based baseline player of island_fortress_env/agents/heuristic.py, choosing the same
// actions: the same evaluation, the same greedy look-ahead, and the same tie-breaking noise drawn
// from numpy's PCG64 generator (its 128-bit state is handed over from numpy).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "bits.h"
#include "generated/heuristic_weights.h"
#include "state.h"

namespace island_fortress {

// numpy's PCG64 (XSL-RR 128/64) and Generator.random(): the same doubles from the same state.
class Pcg64 {
 public:
  Pcg64() = default;
  Pcg64(Bits state, Bits inc) : state_(state), inc_(inc) {}
  uint64_t Next();
  double Random() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  Bits state() const { return state_; }
  Bits inc() const { return inc_; }

 private:
  Bits state_ = 0;  // the LCG state
  Bits inc_ = 1;    // the LCG increment (odd)
};

// numpy's bit generator interface (bitgen_t of numpy/random/bitgen.h, numpy's C API): the
// generator behind a numpy Generator, which BitGenerator.capsule hands out.
struct NumpyBitGen {
  void* state;
  uint64_t (*next_uint64)(void* st);
  uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  uint64_t (*next_raw)(void* st);
};

class Heuristic {
 public:
  explicit Heuristic(Pcg64 rng) : rng_(rng) {}
  // The action for the player to move (the state must not be terminal).
  int Act(const State& state);
  // Act, the tie-breaking noise drawn from a numpy generator (a Python agent's own) instead of rng().
  int ActWith(const State& state, const NumpyBitGen& numpy);
  const Pcg64& rng() const { return rng_; }
  void set_rng(Pcg64 rng) { rng_ = rng; }
  // Bytes of the caches and tables a player allocates on its first decision (at most).
  static size_t CacheBytes();

 private:
  static constexpr double kBig = 1e9;  // beyond any value
  // The constants of one game configuration (heuristic.py's _GameInfo).
  struct Info {
    const Game* game = nullptr;
    // (cells, points, cell count) of every row and level of levels 1-3: their cells are the wall's
    // bits below 64 (level 3 ends at bit 59), so one 64-bit word holds them.
    std::vector<std::tuple<uint64_t, double, int>> majorities;
    std::vector<Bits> placements;  // per card, the anchors (bottom-left cells) of its on-wall placements
    uint64_t all_cards = 0;
    int total_rounds = 0;
  };
  using OppKey = std::tuple<Bits, Bits, Bits, Bits, Bits, int, int64_t, int64_t, double>;

  void Prepare(const Game& game);
  int Decide(const State& st);
  double RemainingRounds(const State& st) const;
  std::array<double, kMaxPlayers> WallValues(const State& st) const;
  std::array<double, kMaxPlayers> ComputeWallValues(const State& st) const;
  std::array<double, kMaxPlayers> Values(const State& st) const;
  double Value(const State& st) const;
  double RewardValue(int card, double rem) const;
  int Missing(int card, Bits free, Bits bad) const;
  double CardValue(int card, double rem, Bits free, Bits bad) const;
  double HandValue(const State& st) const;
  // numpy's Generator.random(): the same doubles from PCG64's own implementation or from numpy's.
  double Noise() { return (numpy_ ? numpy_->next_double(numpy_->state) : rng_.Random()) * 1e-6; }
  void Finish(State& st);
  double Opportunity(const State& st, int region);
  double MoveBonus(const State& st, int region);
  double DrawValue(const State& st) const;
  std::pair<double, int> BestCompletion(const State& st, const std::vector<int>& cands);
  int Role(const State& st, const std::vector<int>& plain, const std::vector<int>& gov);
  int TurnEnd(const State& st, const std::vector<int>& plain, const std::vector<int>& gov);
  std::pair<double, int> BestGovernor(const State& st, const std::vector<int>& gov);
  int Laborers(const State& st, const std::vector<int>& legal) const;
  int Prisons(const State& st, const std::vector<int>& legal) const;
  int PickCard(const State& st, const std::vector<int>& legal);
  int Bid(const State& st, const std::vector<int>& legal) const;
  int Trade(const State& st, const std::vector<int>& legal) const;

  // The wall's part of every seat's value by the wall's contents (heuristic.py's wall_cache): it
  // depends on nothing else in a game, so an entry found is exactly what WallValues computes.
  struct WallEntry {
    Bits occ = 0;
    std::array<Bits, kMaxPlayers> own{};
    std::array<double, kMaxPlayers> vals{};
    bool used = false;
  };
  // The favor hand's value by (hand, free blocks, blocked cells, rounds left), all it depends on.
  struct HandEntry {
    uint64_t hand = 0;
    Bits free = 0, bad = 0;
    double rem = 0.0;
    double value = 0.0;
    bool used = false;
  };
  // Missing()'s answers for the last (free blocks, blocked cells) asked, card by card.
  struct MissingMemo {
    Bits free = 0, bad = 0;
    uint64_t known = 0;  // the cards answered
    std::array<int, kMaxFavorCards> got{};
  };
  static constexpr size_t kWallCacheSize = 256;  // entries, direct-mapped (a power of two)
  static constexpr size_t kHandCacheSize = 256;
  // DrawValue by all it depends on.
  struct DrawEntry {
    uint64_t unknown = 0;
    Bits free = 0, bad = 0;
    double rem = 0.0;
    bool few = false;  // fewer than 4 cards in hand
    double value = 0.0;
    bool used = false;
  };
  static constexpr size_t kDrawCacheSize = 64;

  Pcg64 rng_;                              // breaks ties between equally valued options
  const NumpyBitGen* numpy_ = nullptr;     // replaces rng_ during ActWith
  Info info_;                              // the constants of the game being played
  int me_ = 0;                             // the seat deciding
  std::map<OppKey, double> opp_cache_;     // Opportunity's values within one decision
  mutable std::vector<WallEntry> wall_cache_;  // allocated on first use, emptied for a new game
  mutable std::vector<HandEntry> hand_cache_;  // the same
  mutable MissingMemo missing_memo_;           // emptied for a new game
  mutable std::vector<DrawEntry> draw_cache_;  // allocated on first use, emptied for a new game
  std::array<double, 100> step_pow_{};     // heuristic_weights::kFavorStep ** missing, for missing 0..99
};

}  // namespace island_fortress
