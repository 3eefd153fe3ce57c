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

class Heuristic {
 public:
  explicit Heuristic(Pcg64 rng) : rng_(rng) {}
  // The action for the player to move (the state must not be terminal).
  int Act(const State& state);
  const Pcg64& rng() const { return rng_; }
  void set_rng(Pcg64 rng) { rng_ = rng; }

 private:
  // The constants of one game configuration (heuristic.py's _GameInfo).
  struct Info {
    const Game* game = nullptr;
    std::vector<std::tuple<Bits, double, int>> majorities;  // (cells, points, cell count)
    std::vector<std::vector<Bits>> anchors;                 // every on-wall placement of each card
    uint64_t all_cards = 0;
    int total_rounds = 0;
  };
  using OppKey = std::tuple<Bits, Bits, Bits, Bits, Bits, int, int64_t, int64_t, double>;

  void Prepare(const Game& game);
  int Decide(const State& st);
  double RemainingRounds(const State& st) const;
  std::array<double, kMaxPlayers> WallValues(const State& st) const;
  std::array<double, kMaxPlayers> Values(const State& st) const;
  double Value(const State& st) const;
  double RewardValue(int card, double rem) const;
  int Missing(int card, Bits free, Bits bad) const;
  double CardValue(int card, double rem, Bits free, Bits bad) const;
  double HandValue(const State& st) const;
  double Noise() { return rng_.Random() * 1e-6; }
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

  Pcg64 rng_;                              // breaks ties between equally valued options
  Info info_;                              // the constants of the game being played
  int me_ = 0;                             // the seat deciding
  std::map<OppKey, double> opp_cache_;     // Opportunity's values within one decision
};

}  // namespace island_fortress
