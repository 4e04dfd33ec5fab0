#pragma once
// --fail's value (tessera run --backend sim): a simulated host or link
// turned off at a simulated time.
#include <string>

#include "platform/simgrid/simgrid_platform.hpp"

namespace tessera {

// nodeK@SECONDS or link:NAME@SECONDS; throws InputError naming --fail and the
// value when it is malformed or the time is negative or not finite. Whether
// the run has that node or link is the simulation's to say
// (Simulation::schedule_failure).
platform::SimFailure parse_fail_option(const std::string& spec);

}  // namespace tessera
