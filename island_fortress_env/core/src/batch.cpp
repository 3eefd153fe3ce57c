#include "batch.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "rng.h"

namespace island_fortress {

namespace {
// numpy's SeedSequence constants (numpy/random/bit_generator.pyx).
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

uint32_t HashMix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t Mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// The seed of the random-action chooser of a game (engine/state.py's play_random_game).
constexpr uint64_t kChooserSalt = 0x5EED;
}  // namespace

Pcg64 NumpyDefaultRng(uint64_t seed) {
  std::vector<uint32_t> entropy;  // the seed's 32-bit words, least significant first (at least one)
  do {
    entropy.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed);
  std::array<uint32_t, kPoolSize> pool{};
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = HashMix(i < static_cast<int>(entropy.size()) ? entropy[static_cast<size_t>(i)] : 0, hash_const);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = Mix(pool[dst], HashMix(pool[src], hash_const));
  for (size_t src = kPoolSize; src < entropy.size(); ++src)
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = Mix(pool[dst], HashMix(entropy[src], hash_const));
  std::array<uint32_t, 8> words{};
  uint32_t hash_b = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[static_cast<size_t>(i % kPoolSize)];
    v ^= hash_b;
    hash_b *= kMultB;
    v *= hash_b;
    v ^= v >> kXShift;
    words[static_cast<size_t>(i)] = v;
  }
  std::array<uint64_t, 4> val{};
  for (int i = 0; i < 4; ++i) val[i] = static_cast<uint64_t>(words[2 * i]) | static_cast<uint64_t>(words[2 * i + 1]) << 32;
  // pcg64_set_seed: state and increment from (val[0], val[1]) and (val[2], val[3]).
  const Bits initstate = (static_cast<Bits>(val[0]) << 64) | val[1];
  const Bits initseq = (static_cast<Bits>(val[2]) << 64) | val[3];
  Pcg64 rng(0, (initseq << 1) | 1);
  rng.Next();
  Pcg64 seeded(rng.state() + initstate, rng.inc());
  seeded.Next();
  return seeded;
}

uint64_t GameSeed(uint64_t batch_seed, uint64_t index, uint64_t episode) {
  uint64_t s = batch_seed ^ (0xD1B54A32D192ED03ULL * (index + 1));
  rng::NextU64(s);
  s ^= 0x8BB84B93962EACC9ULL * (episode + 1);
  return rng::NextU64(s);
}

// ----------------------------------------------------------------- ThreadPool

namespace {

// How long a thread spins on a counter before it sleeps.
constexpr std::chrono::microseconds kSpin{50};

// Spins until done() or kSpin has passed; true if done() became true.
template <typename Done>
bool SpinUntil(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (!done()) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
  }
  return true;
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1 || threads > kMaxThreads)
    throw std::invalid_argument("threads must be 1.." + std::to_string(kMaxThreads) + ", not " +
                                std::to_string(threads));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this, i] { Work(i); });
    } catch (const std::system_error& e) {
      Stop();  // the started workers end and join: none is left running or joinable
      throw std::runtime_error("could not start thread " + std::to_string(i + 1) + " of " +
                               std::to_string(threads) + " for the batch (" + e.what() +
                               "): ask for fewer threads");
    }
  }
}

ThreadPool::~ThreadPool() { Stop(); }

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::Run(int part) {
  try {
    (*task_)(Begin(n_, part), Begin(n_, part + 1));
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::Work(int index) {
  uint64_t seen = 0;
  while (true) {
    const auto posted = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!SpinUntil(posted)) {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, posted);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    Run(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);  // the caller is either before its wait or in it
      done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int n, const std::function<void(int, int)>& f) {
  if (workers_.empty() || n < 2) {
    f(0, n);
    return;
  }
  task_ = &f;
  n_ = n;
  error_ = nullptr;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_.notify_all();
  Run(0);
  const auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, finished);
  }
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

// ----------------------------------------------------------------------------- Batch

size_t Batch::GameBytes() {
  // The slot's vectors, the state and its memoised legal actions, an episode's action history
  // (about 700 actions at most), the heuristic player, and one heap block's bookkeeping each.
  constexpr size_t kHistory = 700 * sizeof(int16_t);
  constexpr size_t kBlocks = 4 * 32;
  // Its row of the final results holds at most one component per ScoreReason.
  constexpr size_t kFinalRow = 3 * sizeof(int32_t) + sizeof(uint64_t) +
                               kMaxPlayers * (3 * sizeof(int32_t) + sizeof(float) + 2 * sizeof(int64_t)) +
                               kMaxPlayers * kNumScoreReasons * sizeof(int64_t) + 1;
  return sizeof(std::shared_ptr<const Game>) * 2 + sizeof(std::unique_ptr<State>) + sizeof(State) +
         64 * sizeof(int) + kHistory + 4 * sizeof(uint64_t) + 1 + sizeof(Heuristic) +
         sizeof(std::array<int64_t, kMaxPlayers>) + kFinalRow + kBlocks;
}

size_t Batch::HeuristicBytes() { return Heuristic::CacheBytes(); }

Batch::Batch(std::vector<std::shared_ptr<const Game>> games, uint64_t seed, int threads,
             const std::vector<int>& score_components)
    : batch_seed_(seed), score_components_(score_components), pool_(threads) {
  if (games.size() > static_cast<size_t>(INT_MAX)) throw std::invalid_argument("a batch holds at most INT_MAX games");
  for (const auto& game : games)
    if (!game) throw std::invalid_argument("a batch's games must not be None");
  if (score_components.size() != static_cast<size_t>(kNumScoreReasons))
    throw std::invalid_argument("score_components gives the component of each of the " +
                                std::to_string(kNumScoreReasons) + " score reasons, not " +
                                std::to_string(score_components.size()));
  int num_components = 0;
  for (int c : score_components) {
    if (c < 0 || c >= kNumScoreReasons)
      throw std::invalid_argument("a score component is 0.." + std::to_string(kNumScoreReasons - 1) + ", not " +
                                  std::to_string(c));
    num_components = std::max(num_components, c + 1);
  }
  const int n = static_cast<int>(games.size());
  copies_.resize(static_cast<size_t>(pool_.size()));
  games_.reserve(games.size());
  for (int k = 0; k < n; ++k) games_.push_back(CopyFor(pool_.PartOf(n, k), games[static_cast<size_t>(k)]));
  const auto size = static_cast<size_t>(n);
  states_.resize(size);
  seeds_.assign(size, 0);
  next_seeds_.assign(size, 0);
  seed_chosen_.assign(size, 0);
  episodes_.assign(size, 0);
  start_lengths_.assign(size, 0);
  choosers_.assign(size, 0);
  heuristics_.assign(size, Heuristic(Pcg64()));
  gains_.assign(size, std::array<int64_t, kMaxPlayers>{});
  const size_t seats = size * kMaxPlayers;
  final_.num_components = num_components;
  final_.players.assign(size, 0);
  final_.seed.assign(size, 0);
  final_.length.assign(size, 0);
  final_.rounds.assign(size, 0);
  final_.score.assign(seats, 0);
  final_.rank.assign(seats, 0);
  final_.win.assign(seats, 0.0F);
  final_.blocks_built.assign(seats, 0);
  final_.favors_played.assign(seats, 0);
  final_.jade_spent.assign(seats, 0);
  final_.components.assign(seats * static_cast<size_t>(num_components), 0);
  final_written_.assign(size, 0);
}

const std::shared_ptr<const Game>& Batch::CopyFor(int part, const std::shared_ptr<const Game>& game) {
  auto& copies = copies_[static_cast<size_t>(part)];
  auto found = copies.find(game.get());
  if (found == copies.end())
    found = copies.emplace(game.get(), std::make_pair(game, std::make_shared<const Game>(*game))).first;
  return found->second.second;
}

void Batch::SetGame(int i, const std::shared_ptr<const Game>& game) {
  if (!game) throw std::invalid_argument("a batch's games must not be None");
  games_[static_cast<size_t>(i)] = CopyFor(pool_.PartOf(size(), i), game);
}

void Batch::SetSeed(int i, uint64_t seed) {
  next_seeds_[static_cast<size_t>(i)] = seed;
  seed_chosen_[static_cast<size_t>(i)] = 1;
}

void Batch::SetState(int i, const State& state, uint64_t seed, const BatchOutput& out) {
  if (!state.tallies()) throw std::invalid_argument("a look-ahead copy cannot be played on: it keeps no tallies");
  const auto k = static_cast<size_t>(i);
  held_.emplace(&state.game(), state.game_ptr());
  seeds_[k] = seed;
  choosers_[k] = seed ^ kChooserSalt;
  heuristics_[k].set_rng(NumpyDefaultRng(seed));
  states_[k] = std::make_unique<State>(state);
  states_[k]->set_logging(false);
  start_lengths_[k] = state.history().size();
  gains_[k].fill(0);
  ClearFinal(i);
  Write(i, out);
}

void Batch::ScoreGains(int64_t* out) const {
  for (size_t k = 0; k < gains_.size(); ++k) std::copy(gains_[k].begin(), gains_[k].end(), out + k * kMaxPlayers);
}

void Batch::StartEpisode(int i) {
  const auto k = static_cast<size_t>(i);
  const uint64_t seed = seed_chosen_[k] ? next_seeds_[k] : GameSeed(batch_seed_, k, episodes_[k]);
  seed_chosen_[k] = 0;
  episodes_[k] += 1;
  seeds_[k] = seed;
  choosers_[k] = seed ^ kChooserSalt;
  heuristics_[k].set_rng(NumpyDefaultRng(seed));
  states_[k] = std::make_unique<State>(games_[k], seed);
  states_[k]->set_logging(false);
  start_lengths_[k] = 0;
}

void Batch::Write(int i, const BatchOutput& out) const {
  const State& s = *states_[static_cast<size_t>(i)];
  const int p = s.CurrentPlayer();
  out.player[i] = p;
  if (s.IsTerminal()) {
    std::memset(out.obs + static_cast<size_t>(i) * kObsSize, 0, sizeof(float) * kObsSize);
  } else {
    EncodeObservation(s, p, out.obs + static_cast<size_t>(i) * kObsSize);
  }
  EncodeActionMask(s, out.mask + static_cast<size_t>(i) * kNumActions);
}

void Batch::WriteFinal(int i) {
  const auto k = static_cast<size_t>(i);
  const State& s = *states_[k];
  const int n = s.n();
  FinalResults& f = final_;
  f.players[k] = n;
  f.seed[k] = seeds_[k];
  // a batch's games are made by actions alone from their deal or from the state SetState gave
  f.length[k] = static_cast<int32_t>(s.history().size() - start_lengths_[k]);
  f.rounds[k] = s.round();
  const Tallies& tallies = *s.tallies();  // a batch's games are no look-ahead copies: they keep them
  // The rulebook's order of standing (scoring.standing_keys): score, blocks in the wall, Jade, Treasure.
  std::array<std::array<int64_t, 4>, kMaxPlayers> keys{};
  for (int p = 0; p < n; ++p) keys[p] = {s.score()[p], PopCount(s.own()[p]), s.jade()[p], s.treasure()[p]};
  const int num_components = f.num_components;
  for (int p = 0; p < kMaxPlayers; ++p) {
    const size_t seat = k * kMaxPlayers + static_cast<size_t>(p);
    int64_t* components = f.components.data() + seat * static_cast<size_t>(num_components);
    std::fill_n(components, num_components, 0);
    if (p >= n) {  // no seat: zeros
      f.score[seat] = f.jade_spent[seat] = 0;
      f.rank[seat] = f.blocks_built[seat] = f.favors_played[seat] = 0;
      f.win[seat] = 0.0F;
      continue;
    }
    int rank = 1;  // 1 + the seats standing above this one: tied seats share a position
    for (int q = 0; q < n; ++q) rank += keys[q] > keys[p];
    bool won = false;
    for (int w = 0; w < s.num_winners(); ++w) won |= s.winners()[w] == p;
    f.score[seat] = s.score()[p];
    f.rank[seat] = rank;
    f.win[seat] = won ? static_cast<float>(1.0 / s.num_winners()) : 0.0F;  // scoring.win_share
    f.blocks_built[seat] = static_cast<int32_t>(keys[p][1]);
    f.favors_played[seat] = PopCount(s.favor_played()[p]);
    f.jade_spent[seat] = tallies.jade_spent[p];
    for (int r = 0; r < kNumScoreReasons; ++r) components[score_components_[r]] += tallies.points_by_reason[p][r];
  }
  final_written_[k] = 1;
}

void Batch::ClearFinal(int i) {
  const auto k = static_cast<size_t>(i);
  if (!final_written_[k]) return;
  FinalResults& f = final_;
  f.players[k] = f.length[k] = f.rounds[k] = 0;
  f.seed[k] = 0;
  const size_t seat = k * kMaxPlayers;
  std::fill_n(f.score.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0);
  std::fill_n(f.rank.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0);
  std::fill_n(f.win.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0.0F);
  std::fill_n(f.blocks_built.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0);
  std::fill_n(f.favors_played.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0);
  std::fill_n(f.jade_spent.begin() + static_cast<std::ptrdiff_t>(seat), kMaxPlayers, 0);
  const auto width = static_cast<size_t>(kMaxPlayers * f.num_components);
  std::fill_n(f.components.begin() + static_cast<std::ptrdiff_t>(k * width), width, 0);
  final_written_[k] = 0;
}

void Batch::Reset(const BatchOutput& out) {
  pool_.ParallelFor(size(), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      StartEpisode(i);
      Write(i, out);
      if (out.rewards) std::fill_n(out.rewards + static_cast<size_t>(i) * kMaxPlayers, kMaxPlayers, 0.0F);
      if (out.done) out.done[i] = 0;
      gains_[static_cast<size_t>(i)].fill(0);
      ClearFinal(i);
    }
  });
  started_ = true;
}

int Batch::FirstIllegal(const int64_t* actions, const uint8_t* which) const {
  for (int i = 0; i < size(); ++i)
    if ((!which || which[i]) && !states_[static_cast<size_t>(i)]->IsLegal(actions[i])) return i;
  return -1;
}

void Batch::Step(const int64_t* actions, const BatchOutput& out, const uint8_t* which) {
  pool_.ParallelFor(size(), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      std::array<int64_t, kMaxPlayers>& gains = gains_[static_cast<size_t>(i)];
      float* rewards = out.rewards + static_cast<size_t>(i) * kMaxPlayers;
      std::fill(rewards, rewards + kMaxPlayers, 0.0F);
      if (which && !which[i]) {  // this game waits: its outputs stay as they are
        gains.fill(0);
        out.done[i] = 0;
        ClearFinal(i);
        continue;
      }
      State& s = *states_[static_cast<size_t>(i)];
      const std::array<int64_t, kMaxPlayers> before = s.score();
      s.ApplyLegalAction(static_cast<int>(actions[i]));  // checked by FirstIllegal
      for (int p = 0; p < kMaxPlayers; ++p) gains[p] = s.score()[p] - before[p];
      const bool done = s.IsTerminal();
      out.done[i] = done;
      if (done) {  // the win/loss returns (E23) and the final results, then a new game in this slot
        const std::array<double, kMaxPlayers> returns = s.Returns();
        for (int p = 0; p < s.n(); ++p) rewards[p] = static_cast<float>(returns[p]);
        WriteFinal(i);
        StartEpisode(i);
      } else {
        ClearFinal(i);
      }
      Write(i, out);
    }
  });
}

void Batch::RandomActions(int64_t* out, const uint8_t* which) {
  pool_.ParallelFor(size(), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      if (which && !which[i]) {
        out[i] = -1;
        continue;
      }
      const auto k = static_cast<size_t>(i);
      const std::vector<int>& legal = states_[k]->LegalActions();
      out[i] = legal.empty() ? kPass : legal[rng::Below(choosers_[k], legal.size())];
    }
  });
}

void Batch::HeuristicActions(int64_t* out, const uint8_t* which) {
  pool_.ParallelFor(size(), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      if (which && !which[i]) {
        out[i] = -1;
        continue;
      }
      const auto k = static_cast<size_t>(i);
      out[i] = states_[k]->IsTerminal() ? kPass : heuristics_[k].Act(*states_[k]);
    }
  });
}

}  // namespace island_fortress
