// LU (paper 002) in the factorization registry: P A = L U for m >= n, L and
// U overwriting A, with the candidate sets, the panel buffer and the
// interchange plans as extra data; --pivot partial | tournament | none,
// --tslu-tree binary | flat, --d; the peers are LAPACK's and cuSOLVER's xGETRF.
#include <lapacke.h>

#include "algorithms/factorization.hpp"
#include "algorithms/lu.hpp"
#include "algorithms/lu_check.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

// The right-hand side of the solve check.
constexpr std::uint64_t kSolveSeed = 1;

template <class T>
class LuData final : public FactorData<T> {
 public:
  LuData(TileMatrix<T>& a, LuPivot pivot, const KeepTile& keep)
      : a_(a), b_(a.layout(), pivot, keep), ex_(a, b_, pivot), pivot_(pivot) {}
  Executor& executor() override { return ex_; }
  void add_to(TileDataStore<T>& store) override {
    const TileLayout& L = a_.layout();
    store.add_tiles(0, a_);
    store.add_buffers(static_cast<DataId>(L.tile_rows() * L.tile_cols()), b_.table(),
                      [this](std::size_t x) { return b_.elems(x); });
  }
  Residuals residual(const std::vector<T>& original, const LocalGraphRun&) override {
    const auto perm = lu_row_permutation<T>(a_.layout(), pivot_, [&](int k) { return b_.plan(k); });
    return lu_residual(original, a_, perm, kSolveSeed);
  }
  // Every node contributes its own tiles of A and of the factors and the
  // plans it holds; summed over the nodes, each has the whole of them and
  // checks as a local run does. O(mn) memory per node: a check for test
  // sizes (Cholesky's and QR's distributed checks keep to the node's tiles).
  Residuals residual_distributed(const TileMatrix<T>& original, const Distribution& dist, int self, const DistGraphRun&,
                                 const SumOverNodes& sum) override {
    const TileLayout& L = a_.layout();
    const index_t m = L.m(), n = L.n();
    const std::size_t plan = b_.plan_elems(), mn = static_cast<std::size_t>(m * n);
    std::vector<double> all(2 * mn + plan * L.tile_cols(), 0.0);
    for (int j = 0; j < L.tile_cols(); ++j)
      for (int i = 0; i < L.tile_rows(); ++i) {
        if (dist.owner(i, j).node != self) continue;
        for (index_t c = 0; c < L.col_width(j); ++c)
          for (index_t r = 0; r < L.row_height(i); ++r) {
            const std::size_t at = static_cast<std::size_t>((L.col_offset(j) + c) * m + L.row_offset(i) + r);
            all[at] = static_cast<double>(original.tile(i, j)[r + c * original.ld(i)]);
            all[mn + at] = static_cast<double>(a_.tile(i, j)[r + c * a_.ld(i)]);
          }
      }
    // A plan's int64 fields as doubles (exact below 2^53), its values unused.
    const std::size_t ints = 2 + 3 * lu_stride(L);
    for (int k = 0; k < L.tile_cols() && pivot_ != LuPivot::None; ++k)
      if (dist.owner(L.col_top(k), k).node == self)
        for (std::size_t f = 0; f < ints; ++f) all[2 * mn + k * ints + f] = static_cast<double>(lu_ints(b_.plan(k))[f]);
    sum(all);
    std::vector<T> a(mn);
    TileMatrix<T> f(L);
    for (index_t c = 0; c < n; ++c)
      for (index_t r = 0; r < m; ++r) {
        a[c * m + r] = static_cast<T>(all[c * m + r]);
        f.at(r, c) = static_cast<T>(all[mn + c * m + r]);
      }
    std::vector<std::vector<T>> plans(L.tile_cols(), std::vector<T>(plan));
    for (int k = 0; k < L.tile_cols(); ++k)
      for (std::size_t x = 0; x < ints; ++x)
        lu_ints(plans[k].data())[x] = static_cast<std::int64_t>(all[2 * mn + k * ints + x]);
    const auto perm = lu_row_permutation<T>(L, pivot_, [&](int k) -> const T* { return plans[k].data(); });
    return lu_residual(a, f, perm, kSolveSeed);
  }

 private:
  TileMatrix<T>& a_;
  LuBuffers<T> b_;
  LuExecutor<T> ex_;
  LuPivot pivot_;
};

inline lapack_int getrf(index_t m, index_t n, double* a, lapack_int* ipiv) {
  return LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, a, m, ipiv);
}
inline lapack_int getrf(index_t m, index_t n, float* a, lapack_int* ipiv) {
  return LAPACKE_sgetrf(LAPACK_COL_MAJOR, m, n, a, m, ipiv);
}

class Lu final : public Factorization {
 public:
  Lu() = default;
  explicit Lu(const LuOptions& o) : o_(o) {}
  std::string_view name() const override { return "lu"; }

  std::shared_ptr<const Factorization> configured(const FactorOptions& f) const override {
    if (!f.qr_tree.empty())
      throw InputError("--qr-tree is not an option of --algo lu (its panel's tree is --tslu-tree)");
    if (f.qr_domain >= 0) throw InputError("--qr-domain is not an option of --algo lu");
    LuOptions o;
    if (!f.pivot.empty()) o.pivot = parse_lu_pivot(f.pivot);
    if (!f.tree.empty()) {
      o.tree = parse_lu_tree(f.tree);
      if (o.pivot != LuPivot::Tournament)
        throw InputError("--tslu-tree " + f.tree + " needs --pivot tournament (the pivoting is " + to_string(o.pivot) +
                         ")");
    }
    if (f.d < 0) throw InputError("--d " + std::to_string(f.d) + " must be >= 0");
    if (f.d > 0 && f.gpus == 0)
      throw InputError("--d " + std::to_string(f.d) +
                       " splits the block columns between the CPU cores and the GPUs: it needs --gpus >= 1");
    o.d = f.d;
    o.gpus = f.gpus;
    o.grid_rows = f.grid_rows;
    o.grid_cols = f.grid_cols;
    o.v = f.v;
    return std::make_shared<Lu>(o);
  }
  bool splits_columns() const override { return true; }
  std::string variant() const override {
    std::string s = std::string("pivot=") + to_string(o_.pivot);
    if (o_.pivot == LuPivot::Tournament) s += std::string(" tree=") + to_string(o_.tree);
    if (o_.gpus > 0) s += " d=" + std::to_string(o_.d);
    return s;
  }

  void check_shape(index_t m, index_t n) const override {
    if (m < n) throw InputError("LU needs m >= n: m = " + std::to_string(m) + ", n = " + std::to_string(n));
  }
  MatrixKind default_matrix() const override { return MatrixKind::General; }
  std::string matrix_refusal(MatrixKind kind, index_t m, index_t n) const override {
    if (kind == MatrixKind::Spd && m != n)
      return "is square, but --m " + std::to_string(m) + " differs from --n " + std::to_string(n) +
             ": a tall LU input is general, graded, illcond or rankdef";
    return "";
  }
  bool symmetric_input() const override { return false; }
  // mn² - n³/3 (LAPACK's xGETRF count for m >= n, multiplications and additions).
  double flops(index_t m, index_t n) const override {
    const double M = static_cast<double>(m), N = static_cast<double>(n);
    return M * N * N - N * N * N / 3.0;
  }
  std::uint16_t dominant_kernel() const override { return kLuGemm; }
  std::size_t data_count(const TileLayout& l) const override { return lu_data_count(l); }
  void tasks(const TileLayout& l, TaskSink& sink) const override { lu_tasks(l, o_, sink); }
  KernelShape shape(const TileLayout& l, const TaskDesc& t, char precision, index_t) const override {
    return lu_shape(l, t, precision);
  }
  // Tiles where `dist` puts them, except that with a CPU/GPU split every
  // tile is homed in its node's host memory: the split, not the
  // distribution, decides which device works on a column (lu.hpp).
  Placement placement(const TileLayout& l, const Distribution& dist) const override {
    Placement inner = anchored_placement(l, dist, lu_anchors(l));
    if (o_.gpus == 0) return inner;
    return [inner](DataId x) {
      Location at = inner(x);
      at.device = 0;
      return at;
    };
  }
  std::function<std::size_t(DataId)> phantom_bytes(const TileLayout& l, index_t, std::size_t word) const override {
    const auto none = [](int, int) { return false; };
    auto sizes_d = std::make_shared<LuBuffers<double>>(l, o_.pivot, none);
    auto sizes_s = std::make_shared<LuBuffers<float>>(l, o_.pivot, none);
    const int p = l.tile_rows();
    const DataId pq = static_cast<DataId>(p * l.tile_cols());
    return [l, sizes_d, sizes_s, p, pq, word](DataId d) -> std::size_t {
      if (d >= pq) return word == sizeof(float) ? sizes_s->elems(d - pq) * word : sizes_d->elems(d - pq) * word;
      const int i = static_cast<int>(d % p), j = static_cast<int>(d / p);
      return static_cast<std::size_t>(l.row_height(i) * l.col_width(j)) * word;
    };
  }
  std::unique_ptr<FactorData<double>> data(TileMatrix<double>& a, index_t, const KeepTile& keep) const override {
    return std::make_unique<LuData<double>>(a, o_.pivot, keep);
  }
  std::unique_ptr<FactorData<float>> data(TileMatrix<float>& a, index_t, const KeepTile& keep) const override {
    return std::make_unique<LuData<float>>(a, o_.pivot, keep);
  }
  std::unique_ptr<GpuTables<double>> gpu_tables(const TileLayout& l, index_t ib, double) const override {
    return tables<double>(l, ib);
  }
  std::unique_ptr<GpuTables<float>> gpu_tables(const TileLayout& l, index_t ib, float) const override {
    return tables<float>(l, ib);
  }
  [[noreturn]] void throw_breakdown(std::int64_t column) const override { throw SingularMatrix(column, "partial"); }
  PeerRoutine cusolver_routine() const override { return PeerRoutine::Getrf; }

  int lapack(index_t m, index_t n, double* a, std::vector<double>& aux) const override {
    return lapack_factor(m, n, a, aux);
  }
  int lapack(index_t m, index_t n, float* a, std::vector<float>& aux) const override {
    return lapack_factor(m, n, a, aux);
  }
  Residuals lapack_residual(const std::vector<double>& original, const TileMatrix<double>& a,
                            std::vector<double>& aux) const override {
    return lapack_check(original, a, aux);
  }
  Residuals lapack_residual(const std::vector<float>& original, const TileMatrix<float>& a,
                            std::vector<float>& aux) const override {
    return lapack_check(original, a, aux);
  }

 private:
  // aux: LAPACK's pivots (1-based), as T.
  template <class T>
  static int lapack_factor(index_t m, index_t n, T* a, std::vector<T>& aux) {
    std::vector<lapack_int> ipiv(static_cast<std::size_t>(n));
    const int info = getrf(m, n, a, ipiv.data());
    aux.assign(ipiv.begin(), ipiv.end());
    return info;
  }
  template <class T>
  static Residuals lapack_check(const std::vector<T>& original, const TileMatrix<T>& a, std::vector<T>& aux) {
    std::vector<index_t> ipiv(aux.size());
    for (std::size_t i = 0; i < aux.size(); ++i) ipiv[i] = static_cast<index_t>(aux[i]) - 1;
    return lu_residual(original, a, lu_permutation_from_ipiv(a.layout().m(), ipiv), kSolveSeed);
  }
  template <class T>
  std::unique_ptr<GpuTables<T>> tables(const TileLayout& l, index_t ib) const {
    const LuPivot pivot = o_.pivot;
    return std::make_unique<GpuTables<T>>(
        l,
        [pivot](TileMatrix<T>& a, index_t, const KeepTile& keep) -> std::unique_ptr<FactorData<T>> {
          return std::make_unique<LuData<T>>(a, pivot, keep);
        },
        ib);
  }
  LuOptions o_;
};

}  // namespace

const Factorization& lu_factorization() {
  static const Lu instance;  // stateless: shared by every node of a simulated cluster
  return instance;
}

}  // namespace tessera
