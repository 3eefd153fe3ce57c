// The Python module island_fortress_env.core._core (nanobind). The Python package around it
// (core/state.py) gives a State the engine's public API; this file only converts.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "batch.h"
#include "game.h"
#include "heuristic.h"
#include "observation.h"
#include "search.h"
#include "state.h"
#include "generated/spec.h"
#include "generated/tables.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace island_fortress {
namespace {

// A wall bit set (up to 80 bits) as a Python int.
nb::object BitsToInt(Bits b) {
  const auto lo = static_cast<uint64_t>(b);
  const auto hi = static_cast<uint64_t>(b >> 64);
  nb::object low = nb::steal(PyLong_FromUnsignedLongLong(lo));
  if (!hi) return low;
  nb::object high = nb::steal(PyLong_FromUnsignedLongLong(hi));
  nb::object shift = nb::steal(PyLong_FromLong(64));
  nb::object shifted = nb::steal(PyNumber_Lshift(high.ptr(), shift.ptr()));
  return nb::steal(PyNumber_Or(shifted.ptr(), low.ptr()));
}

Bits IntToBits(uint64_t lo, uint64_t hi) { return (static_cast<Bits>(hi) << 64) | lo; }

// The list type of the fields read off a state (core/state.py's FieldList: a list whose every
// write raises), set once by core/state.py; plain lists until then. A strong reference, never
// released: the type lives as long as the interpreter.
PyObject* g_field_list = nullptr;

nb::object Fields(nb::list values) {
  if (!g_field_list) return std::move(values);
  PyObject* out = PyObject_CallOneArg(g_field_list, values.ptr());
  if (!out) throw nb::python_error();
  return nb::steal(out);
}

template <typename T, size_t N>
nb::object ListOf(const std::array<T, N>& values, int n) {
  nb::list out;
  for (int i = 0; i < n; ++i) out.append(values[static_cast<size_t>(i)]);
  return Fields(std::move(out));
}

nb::object BitsList(const std::array<Bits, kMaxPlayers>& values, int n) {
  nb::list out;
  for (int i = 0; i < n; ++i) out.append(BitsToInt(values[static_cast<size_t>(i)]));
  return Fields(std::move(out));
}

nb::tuple IntTuple(const std::vector<int>& values) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  if (!t) throw nb::python_error();
  for (size_t i = 0; i < values.size(); ++i) PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), PyLong_FromLong(values[i]));
  return nb::steal<nb::tuple>(t);
}

using Card = std::tuple<std::vector<int>, uint64_t, uint64_t, std::vector<int>>;

// A Config from every option of engine/config.py's GameConfig by name (as core/codegen.py's
// core_options gives them): std::invalid_argument naming a missing or unknown option.
Config ConfigFromOptions(const nb::dict& options) {
  Config cfg;
  size_t known = 0;
  ForEachOption(cfg, [&](const char* name, auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if (!options.contains(name)) throw std::invalid_argument(std::string("missing game option ") + name);
    ++known;
    if constexpr (std::is_enum_v<Field>) {
      const int index = nb::cast<int>(options[name]);
      if (index < -1 || index >= NumChoices(Field{}))
        throw std::invalid_argument(std::string("unknown choice of ") + name);
      field = static_cast<Field>(index);
    } else {
      field = nb::cast<Field>(options[name]);
    }
  });
  if (known != options.size()) throw std::invalid_argument("unknown game option(s): the core knows GameConfig's fields");
  return cfg;
}

std::shared_ptr<const Game> MakeGame(const nb::dict& options, const std::vector<Card>& cards) {
  const Config cfg = ConfigFromOptions(options);
  if (cfg.num_players < kMinPlayers || cfg.num_players > kMaxPlayers)
    throw std::invalid_argument("num_players must be 2..4");
  if (cards.empty() || cards.size() > static_cast<size_t>(kMaxFavorCards))
    throw std::invalid_argument("a favor deck holds 1..36 cards");
  std::vector<FavorCard> deck;
  for (const Card& c : cards) {
    FavorCard card;
    card.offsets = std::get<0>(c);
    card.anchor_mask = IntToBits(std::get<1>(c), std::get<2>(c));
    const std::vector<int>& rewards = std::get<3>(c);
    if (rewards.size() != static_cast<size_t>(kNumRewards)) throw std::invalid_argument("a card has 9 rewards");
    for (int off : card.offsets)
      if (off < 0 || off >= kGrid) throw std::invalid_argument("a pattern offset lies off the wall");
    for (size_t i = 0; i < rewards.size(); ++i) card.rewards[i] = rewards[i];
    deck.push_back(std::move(card));
  }
  return std::make_shared<const Game>(cfg, std::move(deck));
}

Pcg64 MakePcg64(uint64_t state_lo, uint64_t state_hi, uint64_t inc_lo, uint64_t inc_hi) {
  return Pcg64(IntToBits(state_lo, state_hi), IntToBits(inc_lo, inc_hi));
}

std::tuple<uint64_t, uint64_t, uint64_t, uint64_t> Pcg64Words(const Pcg64& rng) {
  return {static_cast<uint64_t>(rng.state()), static_cast<uint64_t>(rng.state() >> 64),
          static_cast<uint64_t>(rng.inc()), static_cast<uint64_t>(rng.inc() >> 64)};
}

using Buffer = nb::ndarray<nb::c_contig, nb::device::cpu>;

template <typename Out>
Out* CheckedBuffer(nb::ndarray<nb::c_contig, nb::device::cpu>& a, size_t size, const char* what) {
  if (a.size() != size || a.itemsize() != sizeof(Out))
    throw std::invalid_argument(std::string(what) + ": needs a C-contiguous buffer of " + std::to_string(size) +
                                " items of " + std::to_string(sizeof(Out)) + " bytes");
  return static_cast<Out*>(a.data());
}

// A state's history (State::history) as bytes: each entry's two bytes, little-endian.
nb::bytes HistoryBytes(const std::vector<int16_t>& history) {
  std::string out(history.size() * 2, '\0');
  for (size_t i = 0; i < history.size(); ++i) {
    const auto word = static_cast<uint16_t>(history[i]);
    out[2 * i] = static_cast<char>(word & 0xFF);
    out[2 * i + 1] = static_cast<char>(word >> 8);
  }
  return nb::bytes(out.data(), out.size());
}

std::vector<int16_t> HistoryFromBytes(const nb::bytes& data) {
  const auto* bytes = static_cast<const unsigned char*>(data.data());
  const size_t size = data.size();
  if (size % 2) throw std::invalid_argument("not a history of this game: an odd number of bytes");
  std::vector<int16_t> history(size / 2);
  for (size_t i = 0; i < history.size(); ++i)
    history[i] = static_cast<int16_t>(static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8));
  return history;
}

// Holds a batch's lock for the length of a call. A call that finds another thread inside the
// batch waits for it with the GIL released (that thread may need the GIL to finish its call); the
// GIL is taken again before this lock is given up, so nobody waits for the lock while holding it.
// `started`: the call reads the games, so the batch must have been reset.
template <typename Guarded>
class CallLock {
 public:
  explicit CallLock(const Guarded& b, bool started = false) : lock_(b.mutex(), std::try_to_lock) {
    if (!lock_.owns_lock()) {
      nb::gil_scoped_release release;
      lock_.lock();
    }
    if (started && !b.started()) throw std::runtime_error("reset the batch before this call");
  }

 private:
  std::unique_lock<std::mutex> lock_;
};
using BatchLock = CallLock<Batch>;

BatchOutput Outputs(const Batch& b, Buffer& obs, Buffer& mask, Buffer& player, Buffer& rewards, Buffer& done) {
  const auto n = static_cast<size_t>(b.size());
  return BatchOutput{CheckedBuffer<float>(obs, n * kObsSize, "obs"), CheckedBuffer<uint8_t>(mask, n * kNumActions, "mask"),
                     CheckedBuffer<int32_t>(player, n, "player"),
                     CheckedBuffer<float>(rewards, n * kMaxPlayers, "rewards"), CheckedBuffer<uint8_t>(done, n, "done")};
}

// A read-only numpy array over `data` (of `shape`) that keeps `owner` alive.
template <typename T>
nb::object View(const std::vector<T>& data, std::initializer_list<size_t> shape, nb::handle owner) {
  return nb::ndarray<nb::numpy, const T>(data.data(), shape, owner).cast();
}

}  // namespace
}  // namespace island_fortress

NB_MODULE(_core, m) {
  using namespace island_fortress;
  m.doc() = "The C++ core of the Island Fortress rules engine.";

  // The sizes core/state.py reads; every other number is generated from the engine's declarations
  // (generated/*.h), and SPEC_DIGEST tells which declarations this module was built from.
  nb::dict tables;
  tables["OBS_SIZE"] = kObsSize;
  tables["STATE_SIZE"] = kStateSize;
  m.attr("TABLES") = tables;
  m.attr("SPEC_DIGEST") = kSpecDigest;
  m.attr("GENERATED_DIR") = ISLAND_FORTRESS_GENERATED_DIR;  // where generated/*.h were written

  nb::class_<Game>(m, "Game")
      .def_prop_ro("num_players", &Game::num_players)
      .def_prop_ro("regions", [](const Game& g) { return g.geometry().regions; });
  m.def("make_game", &MakeGame, "options"_a, "cards"_a,
        "A game of a validated configuration (every GameConfig option by name, as core_options gives them) and its loaded favor deck (offsets, anchor mask low and high "
        "64 bits, the 9 rewards of each card).");

  nb::class_<State>(m, "State")
      .def(nb::init<std::shared_ptr<const Game>, uint64_t>(), "game"_a, "seed"_a)
      .def("clone", [](const State& s) { return State(s); })
      .def("current_player", &State::CurrentPlayer)
      .def("is_terminal", &State::IsTerminal)
      .def("legal_actions", [](const State& s) { return IntTuple(s.LegalActions()); })
      .def("apply", &State::ApplyAction, "action"_a, "Apply a legal action (True) or change nothing (False).")
      .def("returns", [](const State& s) {
        const auto r = s.Returns();
        return std::vector<double>(r.begin(), r.begin() + s.n());
      })
      .def("with_block", [](const State& s, int cell, int player, bool governor) {
        if (cell < 0 || cell >= s.game().geometry().num_cells) throw std::out_of_range("no such cell on this wall");
        if (player < 0 || player >= s.n()) throw std::out_of_range("no such seat at this table");
        return s.WithBlock(cell, player, governor);
      }, "cell"_a, "player"_a, "governor"_a)
      .def_prop_ro("seed", &State::seed, "The seed of the game's first state.")
      .def("history", [](const State& s) { return HistoryBytes(s.history()); },
           "What made this state from the game's first state (State::history), as little-endian 16-bit words.")
      .def_static("replay", [](std::shared_ptr<const Game> game, uint64_t seed, const nb::bytes& history, bool logging) {
        if (!game) throw std::invalid_argument("replay needs a game");
        return State::Replay(std::move(game), seed, HistoryFromBytes(history), logging);
      }, "game"_a, "seed"_a, "history"_a, "logging"_a,
      "The state `history` (as history() gives it) makes from the first state of `game` and `seed`.")
      .def("bidding_start", [](const State& s) {
        if (s.decision() != Decision::kPetitionBid) throw std::invalid_argument("no round's bidding under way");
        return s.BiddingStart();
      }, "A look-ahead copy at the round's first bid, the bids sealed since taken back.")
      .def("redeal_unseen", [](const State& s, int seat, uint64_t seed) {
        if (seat < 0 || seat >= s.n()) throw std::out_of_range("seat out of range");
        return s.RedealUnseen(seat, seed);
      }, "seat"_a, "seed"_a, "A copy with what `seat` cannot see drawn again (visibility.redeal_unseen).")
      .def_prop_rw("logging", &State::logging, &State::set_logging)
      .def("log_size", [](const State& s) { return s.log().size(); })
      .def("log_from", [](const State& s, size_t offset) {
        const std::vector<int64_t>& log = s.log();
        if (offset > log.size()) offset = log.size();
        return std::vector<int64_t>(log.begin() + static_cast<std::ptrdiff_t>(offset), log.end());
      }, "offset"_a)
      .def("encode", [](const State& s, int seat, nb::ndarray<nb::c_contig, nb::device::cpu> out) {
        if (seat < 0 || seat >= s.n()) throw std::out_of_range("seat out of range");
        EncodeObservation(s, seat, CheckedBuffer<float>(out, kObsSize, "encode"));
      }, "seat"_a, "out"_a)
      .def("is_legal_mask", [](const State& s, Buffer mask) {
        const auto* m = CheckedBuffer<uint8_t>(mask, kNumActions, "mask");
        size_t k = 0;  // 1 exactly at the legal actions (which are sorted)
        const std::vector<int>& legal = s.LegalActions();
        for (int a = 0; a < kNumActions; ++a) {
          const bool want = k < legal.size() && legal[k] == a;
          if ((m[a] != 0) != want || m[a] > 1) return false;
          k += want;
        }
        return true;
      }, "mask"_a, "Whether `mask` (one byte per action) is 1 exactly at the legal actions and 0 elsewhere.")
      .def("action_mask", [](const State& s, nb::ndarray<nb::c_contig, nb::device::cpu> out) {
        EncodeActionMask(s, CheckedBuffer<uint8_t>(out, kNumActions, "action_mask"));
      }, "out"_a)
      .def("global_state", [](const State& s, nb::ndarray<nb::c_contig, nb::device::cpu> out) {
        EncodeGlobalState(s, CheckedBuffer<float>(out, kStateSize, "global_state"));
      }, "out"_a)
      .def_prop_ro("n", &State::n)
      .def_prop_ro("rng", &State::rng)
      .def_prop_ro("jade", [](const State& s) { return ListOf(s.jade(), s.n()); })
      .def_prop_ro("laborers", [](const State& s) { return ListOf(s.laborers(), s.n()); })
      .def_prop_ro("convicts", [](const State& s) { return ListOf(s.convicts(), s.n()); })
      .def_prop_ro("blocks", [](const State& s) { return ListOf(s.blocks(), s.n()); })
      .def_prop_ro("stock_blocks", [](const State& s) { return ListOf(s.stock_blocks(), s.n()); })
      .def_prop_ro("chips", [](const State& s) { return ListOf(s.chips(), s.n()); })
      .def_prop_ro("treasure", [](const State& s) { return ListOf(s.treasure(), s.n()); })
      .def_prop_ro("score", [](const State& s) { return ListOf(s.score(), s.n()); })
      .def_prop_ro("income_bonus", [](const State& s) { return ListOf(s.income_bonus(), s.n()); })
      .def_prop_ro("petition_bonus", [](const State& s) { return ListOf(s.petition_bonus(), s.n()); })
      .def_prop_ro("region", [](const State& s) { return ListOf(s.region(), s.n()); })
      .def_prop_ro("roles_hand", [](const State& s) { return ListOf(s.roles_hand(), s.n()); })
      .def_prop_ro("roles_table", [](const State& s) { return ListOf(s.roles_table(), s.n()); })
      .def_prop_ro("favor_hand", [](const State& s) { return ListOf(s.favor_hand(), s.n()); })
      .def_prop_ro("favor_played", [](const State& s) { return ListOf(s.favor_played(), s.n()); })
      .def_prop_ro("drawn", [](const State& s) { return ListOf(s.drawn(), s.n()); })
      .def_prop_ro("turns_taken", [](const State& s) { return ListOf(s.turns_taken(), s.n()); })
      .def_prop_ro("bids", [](const State& s) { return ListOf(s.bids(), s.n()); })
      .def_prop_ro("last_bids", [](const State& s) -> nb::object {
        if (!s.has_last_bids()) return nb::none();
        nb::list bids;
        for (int i = 0; i < s.n(); ++i) bids.append(s.last_bids()[static_cast<size_t>(i)]);
        return nb::tuple(bids);
      })
      .def_prop_ro("occ", [](const State& s) { return BitsToInt(s.occ()); })
      .def_prop_ro("own", [](const State& s) { return BitsList(s.own(), s.n()); })
      .def_prop_ro("gov_bits", [](const State& s) { return BitsToInt(s.gov_bits()); })
      .def_prop_ro("reinf", [](const State& s) { return BitsToInt(s.reinf()); })
      .def_prop_ro("sup_jade", &State::sup_jade)
      .def_prop_ro("sup_treasure", &State::sup_treasure)
      .def_prop_ro("sup_chips", &State::sup_chips)
      .def_prop_ro("sup_reinf", &State::sup_reinf)
      .def_prop_ro("sup_laborers", &State::sup_laborers)
      .def_prop_ro("sup_convicts", &State::sup_convicts)
      .def_prop_ro("gov_stock", &State::gov_stock)
      .def_prop_ro("gov_box", &State::gov_box)
      .def_prop_ro("gov_in_hand", &State::gov_in_hand)
      .def_prop_ro("prison_jade", [](const State& s) { return ListOf(s.prison_jade(), s.game().geometry().regions); })
      .def_prop_ro("prison_convicts",
                   [](const State& s) { return ListOf(s.prison_convicts(), s.game().geometry().regions); })
      .def_prop_ro("deck", [](const State& s) { return ListOf(s.deck(), s.deck_size()); })
      .def_prop_ro("deck_size", &State::deck_size)
      .def_prop_ro("favor_discard", &State::favor_discard)
      .def_prop_ro("round", &State::round)
      .def_prop_ro("decision", [](const State& s) { return static_cast<int>(s.decision()); })
      .def_prop_ro("current", &State::CurrentPlayer)
      .def_prop_ro("holder", &State::holder)
      .def_prop_ro("turn_index", &State::turn_index)
      .def_prop_ro("actions_this_turn", &State::actions_this_turn)
      .def_prop_ro("buyback_used", &State::buyback_used)
      .def_prop_ro("last_card", &State::last_card)
      .def_prop_ro("in_action", &State::in_action)
      .def_prop_ro("keep_left", &State::keep_left)
      .def_prop_ro("op", &State::op)
      .def_prop_ro("build_left", &State::build_left)
      .def_prop_ro("build_need", &State::build_need)
      .def_prop_ro("worker_need", &State::worker_need)
      .def_prop_ro("favor_card", &State::favor_card)
      .def_prop_ro("order", [](const State& s) { return ListOf(s.order(), s.order_size()); })
      .def_prop_ro("order_pos", &State::order_pos)
      .def_prop_ro("wall_completer", &State::wall_completer)
      .def_prop_ro("winners", [](const State& s) { return ListOf(s.winners(), s.num_winners()); })
      .def_prop_ro("bid_digits_left", &State::bid_digits_left)
      .def_prop_ro("unlimited", &State::unlimited);

  nb::class_<Heuristic>(m, "Heuristic")
      .def("__init__",
           [](Heuristic* h, uint64_t state_lo, uint64_t state_hi, uint64_t inc_lo, uint64_t inc_hi) {
             new (h) Heuristic(MakePcg64(state_lo, state_hi, inc_lo, inc_hi));
           },
           "state_lo"_a, "state_hi"_a, "inc_lo"_a, "inc_hi"_a,
           "The heuristic player with numpy's PCG64 state and increment, as 64-bit halves.")
      .def("act", [](Heuristic& h, const State& s) {
        if (s.IsTerminal()) throw std::invalid_argument("the game is over: no player to move");
        return h.Act(s);
      }, "state"_a)
      .def("act_numpy", [](Heuristic& h, const State& s, nb::handle capsule) {
        if (s.IsTerminal()) throw std::invalid_argument("the game is over: no player to move");
        auto* numpy = static_cast<const NumpyBitGen*>(PyCapsule_GetPointer(capsule.ptr(), "BitGenerator"));
        if (!numpy) throw nb::python_error();
        return h.ActWith(s, *numpy);
      }, "state"_a, "bit_generator_capsule"_a,
      "act, the noise drawn from a numpy BitGenerator (its .capsule; hold its lock around the call).")
      .def_prop_rw("rng_words", [](const Heuristic& h) { return Pcg64Words(h.rng()); },
                   [](Heuristic& h, const std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>& w) {
                     h.set_rng(MakePcg64(std::get<0>(w), std::get<1>(w), std::get<2>(w), std::get<3>(w)));
                   });

  // Every method that reads or writes the games holds the batch's lock (BatchLock): calls from
  // several threads take turns, whichever releases the GIL.
  nb::class_<Batch>(m, "Batch")
      .def(nb::init<std::vector<std::shared_ptr<const Game>>, uint64_t, int, const std::vector<int>&>(), "games"_a,
           "seed"_a, "threads"_a, "score_components"_a,
           "The games, the batch seed, the threads, and the score component of each ScoreReason in order.")
      .def_prop_ro("size", &Batch::size)
      .def("reset", [](Batch& b, Buffer obs, Buffer mask, Buffer player, Buffer rewards, Buffer done) {
        const BatchOutput out = Outputs(b, obs, mask, player, rewards, done);
        BatchLock lock(b);
        nb::gil_scoped_release release;
        b.Reset(out);
      }, "obs"_a, "mask"_a, "player"_a, "rewards"_a, "done"_a)
      .def("step", [](Batch& b, Buffer actions, Buffer obs, Buffer mask, Buffer player, Buffer rewards, Buffer done,
                      std::optional<Buffer> which) {
        const auto* given = CheckedBuffer<int64_t>(actions, static_cast<size_t>(b.size()), "actions");
        const BatchOutput out = Outputs(b, obs, mask, player, rewards, done);
        const uint8_t* w = which ? CheckedBuffer<uint8_t>(*which, static_cast<size_t>(b.size()), "which") : nullptr;
        // The actions checked are the ones applied: a copy, which no other thread can write to
        // between the check and the step.
        const std::vector<int64_t> copy(given, given + b.size());
        const int64_t* a = copy.data();
        BatchLock lock(b, true);
        const int bad = b.FirstIllegal(a, w);
        if (bad >= 0)
          throw std::invalid_argument("illegal action " + std::to_string(a[bad]) + " in game " + std::to_string(bad));
        nb::gil_scoped_release release;
        b.Step(a, out, w);
      }, "actions"_a, "obs"_a, "mask"_a, "player"_a, "rewards"_a, "done"_a, "which"_a = nb::none(),
      "Apply one action per game (only where which[i]; all legal, else ValueError and nothing changes); "
      "a finished game restarts.")
      .def("random_actions", [](Batch& b, Buffer out, std::optional<Buffer> which) {
        auto* o = CheckedBuffer<int64_t>(out, static_cast<size_t>(b.size()), "out");
        const uint8_t* w = which ? CheckedBuffer<uint8_t>(*which, static_cast<size_t>(b.size()), "which") : nullptr;
        BatchLock lock(b, true);
        nb::gil_scoped_release release;
        b.RandomActions(o, w);
      }, "out"_a, "which"_a = nb::none(), "A random legal action per game (only where which[i], -1 elsewhere).")
      .def("heuristic_actions", [](Batch& b, Buffer out, std::optional<Buffer> which) {
        auto* o = CheckedBuffer<int64_t>(out, static_cast<size_t>(b.size()), "out");
        const uint8_t* w = which ? CheckedBuffer<uint8_t>(*which, static_cast<size_t>(b.size()), "which") : nullptr;
        BatchLock lock(b, true);
        nb::gil_scoped_release release;
        b.HeuristicActions(o, w);
      }, "out"_a, "which"_a = nb::none(), "The heuristic's action per game (only where which[i], -1 elsewhere).")
      .def("set_game", [](Batch& b, int i, const std::shared_ptr<const Game>& game) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        BatchLock lock(b);
        b.SetGame(i, game);
      }, "index"_a, "game"_a, "Game i's episodes from its next one on are of `game`.")
      .def("set_seed", [](Batch& b, int i, uint64_t seed) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        BatchLock lock(b);
        b.SetSeed(i, seed);
      }, "index"_a, "seed"_a, "Game i's next episode is dealt from `seed`.")
      .def("set_state", [](Batch& b, int i, const State& state, uint64_t seed, Buffer obs, Buffer mask, Buffer player,
                           Buffer rewards, Buffer done) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        const BatchOutput out = Outputs(b, obs, mask, player, rewards, done);
        BatchLock lock(b);
        if (!b.started()) throw std::runtime_error("call reset() first");
        b.SetState(i, state, seed, out);
      }, "index"_a, "state"_a, "seed"_a, "obs"_a, "mask"_a, "player"_a, "rewards"_a, "done"_a,
      "Game i continues from a copy of `state`, its chooser and heuristic seeded from `seed`.")
      .def("final_arrays", [](const Batch& b) {
        // Views of the batch's own storage, made once: no lock (the storage never moves).
        const nb::object self = nb::find(&b);
        const FinalResults& f = b.final_results();
        const auto n = static_cast<size_t>(b.size());
        const auto p = static_cast<size_t>(kMaxPlayers);
        nb::dict out;
        out["players"] = View(f.players, {n}, self);
        out["seed"] = View(f.seed, {n}, self);
        out["length"] = View(f.length, {n}, self);
        out["rounds"] = View(f.rounds, {n}, self);
        out["score"] = View(f.score, {n, p}, self);
        out["rank"] = View(f.rank, {n, p}, self);
        out["win"] = View(f.win, {n, p}, self);
        out["blocks_built"] = View(f.blocks_built, {n, p}, self);
        out["favors_played"] = View(f.favors_played, {n, p}, self);
        out["jade_spent"] = View(f.jade_spent, {n, p}, self);
        out["components"] = View(f.components, {n, p, static_cast<size_t>(f.num_components)}, self);
        return out;
      }, "Read-only arrays over the final results of the games that ended on the last step, by name "
         "(rewritten by every step and reset).")
      .def("score_gains", [](const Batch& b, Buffer out) {
        auto* o = CheckedBuffer<int64_t>(out, static_cast<size_t>(b.size()) * kMaxPlayers, "out");
        BatchLock lock(b);
        b.ScoreGains(o);
      }, "out"_a, "Every seat's points scored on the last step, per game.")
      .def("state", [](const Batch& b, int i) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        BatchLock lock(b, true);
        return State(b.state(i));
      }, "index"_a, "A copy of game i's state (batched games keep no event log).")
      .def("seed", [](const Batch& b, int i) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        BatchLock lock(b);
        return b.seed(i);
      }, "index"_a)
      .def("episode", [](const Batch& b, int i) {
        if (i < 0 || i >= b.size()) throw std::out_of_range("no such game");
        BatchLock lock(b);
        return b.episode(i);
      }, "index"_a);

  // The batched search (search.h): begin, then leaves/expand until leaves returns -1, then result.
  nb::class_<Search>(m, "Search")
      .def("__init__", [](Search* self, int threads, double c_puct, double exploration, double bid_threshold,
                          bool simultaneous_bids, bool gumbel, int considered, double gumbel_scale) {
        SearchOptions options{c_puct, exploration, bid_threshold, simultaneous_bids};
        options.gumbel = gumbel;
        options.considered = considered;
        options.gumbel_scale = gumbel_scale;
        new (self) Search(threads, options);
      }, "threads"_a, "c_puct"_a, "exploration"_a, "bid_threshold"_a, "simultaneous_bids"_a, "gumbel"_a = false,
      "considered"_a = 16, "gumbel_scale"_a = 1.0)
      .def_prop_ro("size", [](const Search& s) { CallLock<Search> lock(s); return s.size(); })
      .def_prop_ro("max_rows", [](const Search& s) { CallLock<Search> lock(s); return s.max_rows(); })
      .def("begin", [](Search& s, const std::vector<const State*>& roots, Buffer seeds, int simulations) {
        const auto* given = CheckedBuffer<uint64_t>(seeds, roots.size(), "seeds");
        CallLock<Search> lock(s);
        s.Begin(roots, given, simulations);
      }, "roots"_a, "seeds"_a, "simulations"_a, "One tree per root state, seeded by seeds[i] (uint64).")
      .def("leaves", [](Search& s, Buffer obs, Buffer mask, Buffer starts) {
        CallLock<Search> lock(s);
        const auto rows = static_cast<size_t>(s.max_rows());
        auto* o = CheckedBuffer<float>(obs, rows * kObsSize, "obs");
        auto* m = CheckedBuffer<uint8_t>(mask, rows * kNumActions, "mask");
        auto* st = CheckedBuffer<int32_t>(starts, static_cast<size_t>(s.size()) + 1, "starts");
        nb::gil_scoped_release release;
        return s.Leaves(o, m, st);
      }, "obs"_a, "mask"_a, "starts"_a,
      "Walk every tree to a leaf; write its rows (obs[max_rows][OBS_SIZE] float32, mask[max_rows][NUM_ACTIONS] uint8, "
      "starts[N+1] int32); the rows written, -1 when every tree is done.")
      .def("expand", [](Search& s, Buffer logits, Buffer values, int rows) {
        CallLock<Search> lock(s);
        const auto* l = CheckedBuffer<float>(logits, static_cast<size_t>(rows) * kNumActions, "logits");
        const auto* v = CheckedBuffer<float>(values, static_cast<size_t>(rows), "values");
        nb::gil_scoped_release release;
        s.Expand(l, v);
      }, "logits"_a, "values"_a, "rows"_a, "The network's logits[rows][NUM_ACTIONS] and values[rows] (float32) for the last leaves.")
      .def("result", [](Search& s, Buffer actions, Buffer policy) {
        CallLock<Search> lock(s);
        auto* a = CheckedBuffer<int64_t>(actions, static_cast<size_t>(s.size()), "actions");
        auto* p = CheckedBuffer<float>(policy, static_cast<size_t>(s.size()) * kNumActions, "policy");
        s.Result(a, p);
      }, "actions"_a, "policy"_a, "Each tree's move (int64[N]) and policy at its root (float32[N][NUM_ACTIONS]).")
      .def("nodes", [](const Search& s, int i) {
        CallLock<Search> lock(s);
        if (i < 0 || i >= s.size()) throw std::out_of_range("no such tree");
        return s.nodes(i);
      }, "index"_a);
  m.def("halving_schedule", [](int considered, int simulations) {
    if (considered < 1 || simulations < 0) throw std::invalid_argument("considered >= 1, simulations >= 0");
    return HalvingSchedule(considered, simulations);
  }, "considered"_a, "simulations"_a, "Sequential halving's visits of the considered actions, by simulation.");
  m.def("sealed_self_play", [](const std::vector<std::vector<double>>& payoff, int iterations, double exploration,
                               uint64_t seed) {
    if (iterations < 0) throw std::invalid_argument("iterations must be >= 0");
    if (!(exploration > 0.0 && exploration <= 1.0)) throw std::invalid_argument("exploration must be in (0, 1]");
    return SealedSelfPlay(payoff, iterations, exploration, seed);
  }, "payoff"_a, "iterations"_a, "exploration"_a, "seed"_a,
  "The search's sealed-bid rule played by both players of a zero-sum matrix game: their average strategies.");
  m.attr("MAX_THREADS") = kMaxThreads;
  m.attr("BATCH_GAME_BYTES") = Batch::GameBytes();
  m.attr("HEURISTIC_BYTES") = Batch::HeuristicBytes();
  m.def("set_field_list_type", [](nb::handle type) {
    if (!PyType_Check(type.ptr()) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.ptr()), &PyList_Type))
      throw nb::type_error("the field list type must be a subclass of list");
    Py_XDECREF(g_field_list);
    g_field_list = type.inc_ref().ptr();
  }, "type"_a, "The list type of the fields read off a state (a subclass of list).");
  m.def("game_seed", &GameSeed, "batch_seed"_a, "index"_a, "episode"_a);
  m.def("numpy_default_rng_words", [](uint64_t seed) { return Pcg64Words(NumpyDefaultRng(seed)); }, "seed"_a);
}
