// outcome_codec.h — a mode's outcome as bytes (a torch pickle of a generic dict), so DDP rank 0's
// outcome can travel through the store to the launching parent, which alone writes the report.
#pragma once

#include <string>

#include "training/mode_outcome.h"

namespace ddpbench::training {

std::string encode_outcome(const ModeOutcome& outcome);
// Throws std::runtime_error (c10::Error) on malformed bytes.
ModeOutcome decode_outcome(const std::string& bytes);

}  // namespace ddpbench::training
