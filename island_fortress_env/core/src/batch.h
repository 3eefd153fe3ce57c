// N games stepped together (EnvPool's shape): one call applies one action in every game, writes
// every game's next observation, mask, player to move, rewards and done flag into caller-owned
// buffers, records each game that ended (FinalResults) and starts a new game in its place. The
// games are split over a small pool of threads; the caller may release the GIL around every call,
// and must let one call in at a time: the bindings hold the batch's mutex() around each.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "heuristic.h"
#include "observation.h"
#include "state.h"

namespace island_fortress {

// numpy's SeedSequence(seed).generate_state(4, uint64) feeding PCG64, as default_rng(seed) does.
Pcg64 NumpyDefaultRng(uint64_t seed);

// The seed of episode `episode` of game `index` in a batch seeded with `batch_seed`.
uint64_t GameSeed(uint64_t batch_seed, uint64_t index, uint64_t episode);

// The most threads a batch runs on (its caller's included): more than any machine it serves has
// cores to give one batch, few enough that a mistaken count fails at once instead of starting
// thousands of threads.
inline constexpr int kMaxThreads = 256;

// Runs f(begin, end) over [0, n) split among a fixed set of threads (the caller's included).
// A batch call lasts some tens of microseconds, about what waking a sleeping thread costs, so
// the threads first spin for a short while (kSpin) on the task counter and the pending count and
// only then sleep on the condition variables: back-to-back calls never wait for a wake-up, and an
// idle pool costs no CPU. One ParallelFor at a time (the batch's lock sees to it).
class ThreadPool {
 public:
  // Starts threads - 1 workers (threads in 1..kMaxThreads, else std::invalid_argument); a worker
  // that cannot start stops the ones started and throws std::runtime_error.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // An exception thrown by f on any thread is rethrown here once every part has finished (the
  // first one thrown; the other parts ran to their end).
  void ParallelFor(int n, const std::function<void(int, int)>& f);
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // The part of [0, n) that thread `part` runs: [Begin(n, part), Begin(n, part + 1)).
  int Begin(int n, int part) const {
    return static_cast<int>(static_cast<int64_t>(n) * part / size());
  }
  // The thread whose part of [0, n) holds item i.
  int PartOf(int n, int i) const {
    return static_cast<int>((static_cast<int64_t>(i + 1) * size() - 1) / n);
  }

 private:
  void Work(int index);
  void Run(int part);  // this thread's part of the task, its exception kept
  void Stop();         // stops and joins the workers

  std::vector<std::thread> workers_;         // the threads beside the caller's
  std::mutex mutex_;                         // the sleepers' lock (changes of generation_, stop_)
  std::condition_variable start_;            // a new task is posted
  std::condition_variable done_;             // the last worker finished its part
  const std::function<void(int, int)>* task_ = nullptr;  // the task being run
  int n_ = 0;                                // its item count
  std::atomic<uint64_t> generation_{0};      // counts posted tasks (publishes task_ and n_)
  std::atomic<int> pending_{0};              // workers still on the task
  std::atomic<bool> stop_{false};            // the pool is being destroyed
  std::mutex error_mutex_;                   // guards error_
  std::exception_ptr error_;                 // the first exception a part of the task threw
};

// The buffers one call writes: obs[N][kObsSize], mask[N][kNumActions], player[N],
// rewards[N][kMaxPlayers], done[N] (rewards and done may be null on reset).
struct BatchOutput {
  float* obs;
  uint8_t* mask;
  int32_t* player;
  float* rewards;
  uint8_t* done;
};

// The record of the games that ended on the last Step, one row per game, zeros in the rows of
// the games that did not end there (and after Reset) and for absent seats. The caller reads the
// arrays in place (vector.FinalResults); their storage never moves.
struct FinalResults {
  int num_components = 0;              // C: the score components of a seat
  std::vector<int32_t> players;        // [N] the table size
  std::vector<uint64_t> seed;          // [N] the seed the game was dealt from
  std::vector<int32_t> length;         // [N] the decisions taken in it
  std::vector<int32_t> rounds;         // [N] the rounds played
  std::vector<int64_t> score;          // [N][kMaxPlayers] final scores
  std::vector<int32_t> rank;           // [N][kMaxPlayers] finishing position (1 = winner; ties share one)
  std::vector<float> win;              // [N][kMaxPlayers] win share (1/m for m tied winners)
  std::vector<int32_t> blocks_built;   // [N][kMaxPlayers] blocks on the wall
  std::vector<int32_t> favors_played;  // [N][kMaxPlayers] favor cards laid on the table
  std::vector<int64_t> jade_spent;     // [N][kMaxPlayers] Jade paid to the supply (Tallies::jade_spent)
  std::vector<int64_t> components;     // [N][kMaxPlayers][C] points by score component
};

class Batch {
 public:
  // One game per entry of `games` (table sizes may differ; none null, at most INT_MAX of them),
  // seeded from `seed`, on `threads` threads (1..kMaxThreads); `score_components` gives the
  // component (0..C-1, C = the largest + 1) that each ScoreReason's points count for in the final
  // results (one entry per reason, in their order): else std::invalid_argument.
  Batch(std::vector<std::shared_ptr<const Game>> games, uint64_t seed, int threads,
        const std::vector<int>& score_components);

  // Held around every call by the caller: the methods below are not safe to call concurrently.
  std::mutex& mutex() const { return mutex_; }
  // Bytes of memory one game of a batch holds (its slot, its state, its heuristic player and
  // their allocations, an episode's action history), and those its heuristic player's caches
  // add on its first decision: estimates from the types' sizes, for a check before allocating.
  static size_t GameBytes();
  static size_t HeuristicBytes();

  int size() const { return static_cast<int>(states_.size()); }
  // Whether Reset has run: the methods below that read the games need it.
  bool started() const { return started_; }
  // Starts a new episode in every game.
  void Reset(const BatchOutput& out);
  // The index of the first game where actions[i] is illegal, or -1; with `which`, only the games
  // where which[i] is nonzero are checked.
  int FirstIllegal(const int64_t* actions, const uint8_t* which = nullptr) const;
  // Applies actions[i] in game i (all legal: see FirstIllegal); a finished game writes its row of
  // the final results, then restarts. With `which`, only the games where which[i] is nonzero
  // move: the others keep their state, obs, mask and player, and get zero rewards, done 0, zero
  // score gains and a zero row of final results.
  void Step(const int64_t* actions, const BatchOutput& out, const uint8_t* which = nullptr);
  // A uniformly random legal action per game (each game's own SplitMix64 chooser); with `which`,
  // only in the games where which[i] is nonzero (-1 elsewhere, and their choosers do not draw).
  void RandomActions(int64_t* out, const uint8_t* which = nullptr);
  // The heuristic player's action per game (one player per game, seeded like the episode); with
  // `which`, only in the games where which[i] is nonzero (-1 elsewhere).
  void HeuristicActions(int64_t* out, const uint8_t* which = nullptr);
  // Game i's episodes from its next one on are of `game` (the episode under way keeps its own).
  void SetGame(int i, const std::shared_ptr<const Game>& game);
  // Game i's next episode is dealt from `seed` instead of its GameSeed (the episode under way
  // keeps its own); the ones after it from their GameSeed again.
  void SetSeed(int i, uint64_t seed);
  // Game i continues from a copy of `state` (a game under way, not a look-ahead copy: else
  // std::invalid_argument), its random chooser and heuristic player seeded from `seed` as an
  // episode dealt from it would be, and writes its row of `out`; its final results count the
  // decisions taken from `state` on. The episodes after it are dealt as before.
  void SetState(int i, const State& state, uint64_t seed, const BatchOutput& out);
  // Every seat's points scored on the last Step, per game (in the game that ended there, where
  // one did): out[N][kMaxPlayers], zeros for absent seats and after Reset.
  void ScoreGains(int64_t* out) const;
  // The games that ended on the last Step (see FinalResults).
  const FinalResults& final_results() const { return final_; }
  const State& state(int i) const { return *states_[static_cast<size_t>(i)]; }
  uint64_t seed(int i) const { return seeds_[static_cast<size_t>(i)]; }
  uint64_t episode(int i) const { return episodes_[static_cast<size_t>(i)]; }

 private:
  void StartEpisode(int i);
  void Write(int i, const BatchOutput& out) const;
  void WriteFinal(int i);  // game i's row of final_, from its finished state
  void ClearFinal(int i);  // zeros in game i's row of final_ (if it holds a game)

  // The copy of `game` that the games of thread `part` play (made on first use).
  const std::shared_ptr<const Game>& CopyFor(int part, const std::shared_ptr<const Game>& game);

  mutable std::mutex mutex_;                        // one call at a time (see mutex())
  std::vector<std::shared_ptr<const Game>> games_;  // each game's configuration (of its next episodes)
  // Each thread's copies of the configurations it was given, by the one given: the games a
  // thread steps share one copy (threads never share a reference count, and a game slot holds
  // no configuration of its own). Kept for the batch's life, so a configuration's address (what
  // the heuristic caches by) is never reused.
  std::vector<std::unordered_map<const Game*, std::pair<std::shared_ptr<const Game>, std::shared_ptr<const Game>>>>
      copies_;
  uint64_t batch_seed_;                             // every episode's seed derives from it
  bool started_ = false;                            // a Reset has finished: every game has a state
  std::vector<std::unique_ptr<State>> states_;      // the games being played
  std::vector<uint64_t> seeds_;                     // each game's episode seed
  std::vector<uint64_t> next_seeds_;                // the seed SetSeed chose for a game's next episode
  std::vector<uint8_t> seed_chosen_;                // whether it did
  std::vector<uint64_t> episodes_;                  // each game's episode count
  std::vector<size_t> start_lengths_;               // the history a game was set to (SetState), else 0
  // The configurations of the states given to SetState, kept for the batch's life (as copies_).
  std::unordered_map<const Game*, std::shared_ptr<const Game>> held_;
  std::vector<uint64_t> choosers_;                  // each game's random-action generator
  std::vector<Heuristic> heuristics_;               // each game's heuristic player
  std::vector<std::array<int64_t, kMaxPlayers>> gains_;  // each game's score changes on the last Step
  std::vector<int> score_components_;               // the component of each ScoreReason
  FinalResults final_;                              // the games that ended on the last Step
  std::vector<uint8_t> final_written_;              // the games whose row of final_ is not zeros
  ThreadPool pool_;                                 // splits the games over threads
};

}  // namespace island_fortress
