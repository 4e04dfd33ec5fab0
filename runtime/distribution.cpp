#include "runtime/distribution.hpp"

#include <algorithm>
#include <vector>

#include "base/error.hpp"

namespace tessera {
namespace {

void check_grid(int Pr, int Pc) {
  if (Pr < 1) throw InputError("grid rows Pr = " + std::to_string(Pr) + " must be >= 1");
  if (Pc < 1) throw InputError("grid columns Pc = " + std::to_string(Pc) + " must be >= 1");
}

}  // namespace

MultiLevelBlockCyclic::MultiLevelBlockCyclic(const TileLayout& layout, int Pr, int Pc, int G, int v, Columns columns)
    : layout_(layout), Pr_(Pr), Pc_(Pc), G_(G), v_(v), columns_(columns) {
  check_grid(Pr, Pc);
  if (G < 0) throw InputError("GPUs per node G = " + std::to_string(G) + " must be >= 0");
  if (v < 1) throw InputError("--v " + std::to_string(v) + ": the virtual tile height must be >= 1 tile row");
  for (int i = 0; i < layout.tile_rows(); ++i) row_node_.push_back(((i / v_) % Pr_) * Pc_);
  for (int j = 0; j < layout.tile_cols(); ++j) col_.push_back(compute(0, j));
}

Location MultiLevelBlockCyclic::owner(int i, int j) const {
  if (i >= 0 && j >= 0 && i < static_cast<int>(row_node_.size()) && j < static_cast<int>(col_.size())) {
    Location l = col_[j];
    l.node += row_node_[i];
    return l;
  }
  return compute(i, j);
}

Location MultiLevelBlockCyclic::compute(int i, int j) const {
  const int top = layout_.col_top(j);
  Location l;
  l.node = ((i / v_) % Pr_) * Pc_ + top % Pc_;
  if (G_ == 0) return l;
  if (columns_ == Columns::AllOnGpus) l.device = ((top / Pc_) * layout_.s() + layout_.col_sub(j)) % G_ + 1;
  else if (layout_.is_remainder(j)) l.device = (top / Pc_) % G_ + 1;
  return l;
}

std::string MultiLevelBlockCyclic::name() const {
  return "multi-level block-cyclic " + std::to_string(Pr_) + "x" + std::to_string(Pc_) + ", " + std::to_string(G_) +
         " GPU(s) per node" + (columns_ == Columns::AllOnGpus ? ", every column on the GPUs" : "") +
         (v_ > 1 ? ", virtual tiles of " + std::to_string(v_) + " tile rows" : "");
}

int default_virtual_tile_height(int p, int Pr) {
  if (p < 1 || Pr < 1)
    throw InputError("virtual tile height of " + std::to_string(p) + " tile rows on " + std::to_string(Pr) +
                     " node rows");
  if (Pr == 1) return 1;  // one node row: nothing crosses a node boundary
  return std::max(1, p / (8 * Pr));
}

HeteroColumnCyclic::HeteroColumnCyclic(const TileLayout& layout, int G) : inner_(layout, 1, 1, G) {}

std::string HeteroColumnCyclic::name() const {
  return "heterogeneous 1-D column-cyclic, " + std::to_string(inner_.gpus_per_node()) + " GPU(s)";
}

BlockCyclic2D::BlockCyclic2D(int Pr, int Pc) : Pr_(Pr), Pc_(Pc) { check_grid(Pr, Pc); }

std::string BlockCyclic2D::name() const {
  return "2-D block-cyclic " + std::to_string(Pr_) + "x" + std::to_string(Pc_);
}

std::function<Location(std::uint32_t)> anchored_placement(const TileLayout& layout, const Distribution& dist,
                                                          std::vector<std::pair<int, int>> anchors) {
  const int p = layout.tile_rows();
  const std::uint32_t pq = static_cast<std::uint32_t>(p) * static_cast<std::uint32_t>(layout.tile_cols());
  return [&dist, p, pq, anchors = std::move(anchors)](std::uint32_t d) {
    if (d < pq) return dist.owner(static_cast<int>(d % p), static_cast<int>(d / p));
    const auto& [i, j] = anchors.at(d - pq);
    return dist.owner(i, j);
  };
}

}  // namespace tessera
