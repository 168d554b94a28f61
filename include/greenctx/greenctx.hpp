// greenctx: partition a GPU's SMs with CUDA green contexts. Include this for everything.
#pragma once

#include "greenctx/device.hpp"
#include "greenctx/driver.hpp"
#include "greenctx/error.hpp"
#include "greenctx/event.hpp"
#include "greenctx/execution_context.hpp"
#include "greenctx/granularity.hpp"
#include "greenctx/group_params.hpp"
#include "greenctx/memory.hpp"
#include "greenctx/partition.hpp"
#include "greenctx/partition_plan.hpp"
#include "greenctx/probe.hpp"
#include "greenctx/resource.hpp"
#include "greenctx/split.hpp"
#include "greenctx/stream.hpp"
#include "greenctx/verify.hpp"
#include "greenctx/workloads.hpp"
