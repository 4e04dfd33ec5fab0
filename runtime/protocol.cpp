#include "runtime/protocol.hpp"

namespace tessera {

const char* instance_kind_name(InstanceKind k) {
  switch (k) {
    case InstanceKind::Owner: return "owner";
    case InstanceKind::NativeInput: return "native input";
    case InstanceKind::IntraNodeAlienInput: return "intra-node alien input";
    case InstanceKind::InterNodeAlienInput: return "inter-node alien input";
    case InstanceKind::NativeMinorOutput: return "native minor output";
    case InstanceKind::SinkMinorOutput: return "sink minor output";
    case InstanceKind::IntraNodeSourceMinorOutput: return "intra-node source minor output";
    case InstanceKind::InterNodeSourceMinorOutput: return "inter-node source minor output";
  }
  return "?";
}

void node_instances(const TaskDesc& t, const Placement& where, int self, std::vector<Instance>& out) {
  const int main = t.main_output();
  if (main < 0) return;
  const Location m = where(t.access[main].data);
  if (m.node == self) out.push_back({InstanceKind::Owner, main, m});
  for (int a = 0; a < t.n_access; ++a) {
    if (a == main) continue;
    const Location x = where(t.access[a].data);
    const bool same_node = x.node == m.node, same_device = same_node && x.device == m.device;
    if (t.access[a].mode != AccessMode::Write) {  // the access reads: an input
      if (same_device) {
        if (self == m.node) out.push_back({InstanceKind::NativeInput, a, m});
      } else if (same_node) {
        if (self == m.node) out.push_back({InstanceKind::IntraNodeAlienInput, a, m});
      } else if (self == x.node) {
        out.push_back({InstanceKind::InterNodeAlienInput, a, m});
      }
    }
    if (writes(t.access[a].mode)) {  // a minor output
      if (same_device) {
        if (self == m.node) out.push_back({InstanceKind::NativeMinorOutput, a, m});
        continue;
      }
      if (self == x.node) out.push_back({InstanceKind::SinkMinorOutput, a, m});
      if (self == m.node)
        out.push_back(
            {same_node ? InstanceKind::IntraNodeSourceMinorOutput : InstanceKind::InterNodeSourceMinorOutput, a, x});
    }
  }
}

}  // namespace tessera
