#pragma once
// Tile LU factorization with row pivoting, P A = L U for m >= n (paper 002),
// on the rectangular tile layout. For each column k (width w, tile row
// t = col_top(k), local diagonal offset Δ), with its panel the rows of
// column k from the diagonal down:
//   pivot selection (--pivot):
//     partial     GATHER the panel's tiles into one buffer, PANEL = GEPP on it
//                 (002 Alg. 1's cpu_dgetrf: the MAGMA-style baseline), its
//                 factors SCATTERed back to the panel's tiles (no DIAG, no
//                 TRSM_L and no interchanges for column k itself)
//     tournament  LEAF = GEPP on each tile's panel rows: w candidate rows;
//                 MERGE = GEPP on two stacked candidate sets, up a binary or a
//                 flat tree; PIVOTS = the root's rows (CALU's TSLU, 002 §2.4
//                 Steps 0-3, one row block per tile row)
//     none        no selection, no interchanges
//   the interchanges, on every tile column j (left of the panel too, so
//   that L ends in LAPACK's form; 002 §2.4 Step 4):
//     SWAP       rows Δ.. of tile (t,j) permuted so that the selected rows
//                that lie in tile row t reach their places
//     EXCHANGE   for each tile row i > t: the selected rows in tile (i,j)
//                trade places with the rows of the diagonal block they replace
//   DIAG        LU without pivoting of tile (t,k) rows Δ.. (002 §2.4 Step 5)
//   TRSM_L      L_ik = A_ik U_kk^{-1}, i > t
//   TRSM_U      U_kj = L_kk^{-1} A_kj (rows Δ..Δ+w of tile (t,j)), j > k
//   GEMM        A_ij -= L_ik U_kj, i >= t (rows below the diagonal block), j > k
// A selected row's interchange with the diagonal block is one transposition
// per row, disjoint from the others: so the EXCHANGEs of one column commute
// and each touches two tiles only, a task of the tile runtime.
//
// Stability: partial pivoting is GEPP's. Tournament pivoting chooses other
// rows in general; CALU is as stable as GEPP in practice (002 §2.4, citing
// Grigori, Demmel, Xiang, SC 2008 and SIAM J. Matrix Anal. Appl. 32(4), 2011,
// whose worst-case growth bound is larger than GEPP's and grows with the
// tree's height). Every run can be checked (--check: backward error, solve
// residual, growth factor; algorithms/lu_check.hpp).
//
// With GPUs and a CPU share of d block columns (002 Alg. 2), the tasks of
// column j at step k run on the CPU cores when j < k + d and on a GPU
// otherwise (TaskDesc::device): the CPU side always holds the next d
// columns, one more column moves over from the GPU after every step (002
// line 11), and the panel's kernels run on the cores. With d = 0 the GPUs
// hold every column and run the panel's kernels too, but for the
// tournament's candidate selection (LEAF, MERGE, PIVOTS: cores only); the
// panel's host work is then done through the device's kernels
// (TileKernels::from_host, lu_permute_from_host), since G and P_k live in
// the GPU's memory.
//
// Data: the p*q tiles; then C_i, the candidate set of tile row i (p of
// them, reused by every step); the panel buffer G (partial pivoting); and
// P_k, column k's interchange plan (q of them). A candidate set and a plan
// hold int64 indices and values in one buffer of T so that each travels as
// one datum (layouts in LuBuffers).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/tile_matrix.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

enum class LuPivot { Partial, Tournament, None };
enum class LuTree { Binary, Flat };
LuPivot parse_lu_pivot(const std::string& name);  // throws InputError naming --pivot
LuTree parse_lu_tree(const std::string& name);    // throws InputError naming --tslu-tree
const char* to_string(LuPivot p);
const char* to_string(LuTree t);

struct LuOptions {
  LuPivot pivot = LuPivot::Partial;
  LuTree tree = LuTree::Binary;
  // 002 Alg. 2: block columns the CPU side holds, and the GPUs per node the
  // other columns use. Without GPUs no split: tasks run where their tile
  // lives; with GPUs and d = 0 the GPUs hold every column (see above).
  int d = 0;
  int gpus = 0;
  // The grid's node rows and virtual tile height (MultiLevelBlockCyclic):
  // a column's EXCHANGEs are inserted node row by node row, so that the top
  // tile, which each of them updates, crosses to another node row once per
  // node row instead of once per tile row.
  int grid_rows = 1, v = 1;
  // The grid's node columns: column j's GPU is the one the distribution puts
  // its tiles on, 1 + (top-level column / Pc) mod G (runtime/distribution.hpp).
  int grid_cols = 1;
};

// The stride of LU's buffers below (their "B"): the tallest tile row and
// the widest tile column, so at most the layout's B. A --B beyond the matrix
// (one tile of the whole matrix) then sizes them by the matrix, not by B:
// with B = 2^31 and n = 192 the panel buffer alone was once m * B elements.
std::size_t lu_stride(const TileLayout& layout);

// The buffers of an LU factorization besides the matrix, reached through a
// pointer table (like TileMatrix's) so that a node points the entries it
// does not own at received copies. Layouts, in elements of T, with int64
// fields stored in place of 8 / sizeof(T) elements each:
//   candidate set: int64 count, int64 info (of the GEPP that chose them),
//                  B int64 panel-relative row ids, then B×B values (ld B)
//   panel buffer:  m×B values (ld m), the panel's rows from its top
//   plan of column k: int64 w, int64 info, B int64 rows (the selected
//                  panel-relative rows in pivot order), B int64 perm
//                  (SWAP's permutation of tile row t's panel rows), B int64
//                  xch (EXCHANGE's partner of diagonal-block row r, or -1)
template <class T>
class LuBuffers {
 public:
  // Allocates the buffers `opts.pivot` uses whose anchor tile keep names
  // (C_i: (i,0); G: (0,0); P_k: (col_top(k),k)); empty keep: all of them.
  LuBuffers(const TileLayout& layout, LuPivot pivot, const std::function<bool(int, int)>& keep = {});
  static constexpr std::size_t ints(std::size_t n) { return n * 8 / sizeof(T); }
  std::size_t cand_elems() const { return ints(2 + B_) + B_ * B_; }
  std::size_t panel_elems() const { return static_cast<std::size_t>(m_) * B_; }
  std::size_t plan_elems() const { return ints(2 + 3 * B_); }
  // Every buffer, in data order (C_0.., G, P_0..): pointer and elements.
  std::vector<T*>& table() { return ptr_; }
  const std::vector<T*>& table() const { return ptr_; }
  // Elements of buffer x; 0 for one the pivoting does not use.
  std::size_t elems(std::size_t x) const {
    if (pivot_ == LuPivot::None) return 0;
    if (x < p_) return pivot_ == LuPivot::Tournament ? cand_elems() : 0;
    if (x == p_) return pivot_ == LuPivot::Partial ? panel_elems() : 0;
    return plan_elems();
  }
  T* cand(int i) { return ptr_[i]; }
  T* panel() { return ptr_[p_]; }
  T* plan(int k) { return ptr_[p_ + 1 + k]; }
  const T* plan(int k) const { return ptr_[p_ + 1 + k]; }
  std::size_t B() const { return B_; }

 private:
  std::size_t p_, B_;
  index_t m_;
  LuPivot pivot_;
  std::vector<T*> ptr_;
  std::vector<std::vector<T>> storage_;
};

// The int64 at field f of a buffer of T.
template <class T>
std::int64_t* lu_ints(T* buf, std::size_t f = 0) {
  return reinterpret_cast<std::int64_t*>(buf) + f;
}
template <class T>
const std::int64_t* lu_ints(const T* buf, std::size_t f = 0) {
  return reinterpret_cast<const std::int64_t*>(buf) + f;
}

// Serial task order of one LU factorization (see above); data: lu_data_count.
void lu_tasks(const TileLayout& layout, const LuOptions& opts, TaskSink& sink);
std::size_t lu_data_count(const TileLayout& l);
// Tile anchors of the extra data (for their placement), in data order.
std::vector<std::pair<int, int>> lu_anchors(const TileLayout& l);
KernelShape lu_shape(const TileLayout& layout, const TaskDesc& t, char precision);

// The row permutation of the finished factorization: perm[x] = the row of A
// that ends at row x of P A (0-based), replayed from the plans.
// plan(k): column k's plan (LuBuffers' layout, B = lu_stride(layout)).
template <class T>
std::vector<index_t> lu_row_permutation(const TileLayout& layout, LuPivot pivot,
                                        const std::function<const T*(int)>& plan);

template <class T>
class LuExecutor final : public Executor {
 public:
  LuExecutor(TileMatrix<T>& a, LuBuffers<T>& b, LuPivot pivot) : a_(a), b_(b), pivot_(pivot) {}
  void execute(const TaskDesc& t, WorkerContext& w) override;
  KernelShape shape(const TaskDesc& t) const override { return lu_shape(a_.layout(), t, sizeof(T) == 8 ? 'd' : 's'); }

 private:
  // Column k's plan (LuBuffers' layout) that brings the panel rows rows[0..w)
  // to its top, in host memory; throws SingularMatrix when info > 0.
  std::vector<T> make_plan(int k, const index_t* rows, index_t info) const;
  // make_plan, written to P_k in the worker's memory through its kernels; returns the host copy.
  std::vector<T> write_plan(kernels::TileKernels<T>& K, int k, const index_t* rows, index_t info);
  // order[x]: the panel row that column k's plan (in host memory) brings to panel row x.
  std::vector<index_t> plan_order(const T* plan, int k, index_t mk) const;
  TileMatrix<T>& a_;
  LuBuffers<T>& b_;
  LuPivot pivot_;
};

extern template class LuBuffers<float>;
extern template class LuBuffers<double>;
extern template class LuExecutor<float>;
extern template class LuExecutor<double>;

}  // namespace tessera
