// The observation of one seat, the action mask and the global state vector, byte for byte as
// island_fortress_env/env/observation.py (ObservationEncoder, action_mask) and env/global_state.py write them.
#pragma once

#include <cstdint>

#include "generated/observation_spec.h"
#include "state.h"

namespace island_fortress {

// The layout and the divisors: generated/observation_spec.h (engine/observation_spec.py).
// global_state.py: every seat's observation, the deck (in it, position from the top), the seat to move.
inline constexpr int kDeckStart = kMaxPlayers * kObsSize;
inline constexpr int kPositionStart = kDeckStart + kMaxFavorCards;
inline constexpr int kToMoveStart = kPositionStart + kMaxFavorCards;
inline constexpr int kStateSize = kToMoveStart + kMaxPlayers;  // 5344
inline constexpr float kObsLow = -1.0F;
inline constexpr float kObsHigh = 10.0F;

// Writes the observation of `seat` (kObsSize floats).
void EncodeObservation(const State& state, int seat, float* out);
// Writes 1 where an action is legal now, else 0 (kNumActions bytes).
void EncodeActionMask(const State& state, uint8_t* out);
// Writes the global state vector (kStateSize floats).
void EncodeGlobalState(const State& state, float* out);

}  // namespace island_fortress
