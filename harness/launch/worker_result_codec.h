// worker_result_codec.h — rank 0's DDP results as bytes (a torch pickle of a generic dict), so
// they can travel through the store to the parent, which alone writes the report.
#pragma once

#include <string>

#include "modes/ddp/ddp_worker.h"

namespace ddpbench::launch {

std::string encode_worker_result(const modes::ddp::DdpWorkerResult& result);
// Throws std::runtime_error on malformed bytes.
modes::ddp::DdpWorkerResult decode_worker_result(const std::string& bytes);

}  // namespace ddpbench::launch
