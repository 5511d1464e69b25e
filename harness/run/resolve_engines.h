// resolve_engines.h — the part of resolve_run that settles how the data-parallel modes train: the
// DDP engine (its buckets, its comm hook, c10d's own options), gradient accumulation, --amp and
// zero's stage, each checked against the run's modes and backend (InputError naming the fix).
#pragma once

#include "requests/run_request.h"
#include "training/run_setup.h"

namespace ddpbench::run {

void resolve_ddp(const requests::RunRequest& o, training::RunSetup& s);
void resolve_accumulation(const requests::RunRequest& o, training::RunSetup& s);
void check_amp(const requests::RunRequest& o, const training::RunSetup& s);
void resolve_zero(const requests::RunRequest& o, training::RunSetup& s);

}  // namespace ddpbench::run
