// The observation of one seat, the action mask and the global state vector, byte for byte as
// island_fortress_env/observation.py (ObservationEncoder, action_mask) and global_state.py write them.
#pragma once

#include <cstdint>

#include "state.h"

namespace island_fortress {

inline constexpr int kNumPlanes = 12;                     // wall planes, each 4 x 20
inline constexpr int kNumPlayerFeatures = 37;             // per seat, me first
inline constexpr int kNumGlobalFeatures = 65;             // global and decision context
inline constexpr int kWallStart = 0;
inline constexpr int kPlayersStart = kWallStart + kNumPlanes * kGrid;                   // 960
inline constexpr int kGlobalStart = kPlayersStart + kMaxPlayers * kNumPlayerFeatures;   // 1108
inline constexpr int kPrivateStart = kGlobalStart + kNumGlobalFeatures;                 // 1173
inline constexpr int kObsSize = kPrivateStart + 4 * kMaxFavorCards;                     // 1317
inline constexpr int kMiddleSize = kPrivateStart - kPlayersStart;                       // scaled numbers
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
