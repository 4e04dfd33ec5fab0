#include "experiments/sim_failure_option.hpp"

#include <cmath>
#include <exception>
#include <string_view>

#include "base/error.hpp"

namespace tessera {

platform::SimFailure parse_fail_option(const std::string& spec) {
  using platform::SimFailure;
  const auto bad = [&](const std::string& why) { return InputError("--fail " + spec + ": " + why); };
  const std::size_t at = spec.rfind('@');
  if (at == std::string::npos)
    throw bad("expected nodeK@SECONDS or link:NAME@SECONDS (e.g. node2@0.5, link:node1-net@0.5)");
  SimFailure f;
  f.spec = spec;
  const std::string target = spec.substr(0, at), time = spec.substr(at + 1);
  constexpr std::string_view kLink = "link:";
  f.kind = target.rfind(kLink, 0) == 0 ? SimFailure::Kind::Link : SimFailure::Kind::Node;
  f.name = f.kind == SimFailure::Kind::Link ? target.substr(kLink.size()) : target;
  if (f.kind == SimFailure::Kind::Node && f.name.rfind("node", 0) != 0)
    throw bad("'" + target + "' is neither a node (nodeK) nor a link (link:NAME)");
  if (f.name.empty()) throw bad("'link:' is followed by no link name");
  std::size_t used = 0;
  try {
    f.at_s = std::stod(time, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (time.empty() || used != time.size() || !std::isfinite(f.at_s))
    throw bad("'" + time + "' is not a time in seconds");
  if (f.at_s < 0) throw bad("the time " + time + " s is negative (simulated seconds since the run started)");
  return f;
}

}  // namespace tessera
