// QR (001 Alg. 2) in the factorization registry: A = QR for m >= n, R and
// the reflectors overwriting A, with the T factors and the panel copies as
// extra data; the peers are LAPACK's and cuSOLVER's xGEQRF.
#include <lapacke.h>

#include "algorithms/factorization.hpp"
#include "algorithms/qr.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

template <class T>
class QrData final : public FactorData<T> {
 public:
  QrData(TileMatrix<T>& a, index_t ib, const KeepTile& keep, QrTree tree)
      : a_(a), f_(a.layout(), ib, keep, std::move(tree)), ex_(a, f_) {}
  Executor& executor() override { return ex_; }
  void add_to(TileDataStore<T>& store) override {
    const TileLayout& L = a_.layout();
    store.add_tiles(0, a_, &f_);
    store.add_panels(static_cast<DataId>(L.tile_rows() * L.tile_cols()), f_, f_.panels());
  }
  // The thin Q, formed by applying the factorization to [I; 0] as a task graph.
  Residuals residual(const std::vector<T>& original, const LocalGraphRun& run) override {
    const TileLayout& L = a_.layout();
    TileMatrix<T> e(L);
    for (index_t d = 0; d < L.n(); ++d) e.at(d, d) = T(1);
    QrFormQExecutor<T> qex(a_, f_, e);
    run(
        qr_form_q_data_count(L), [&](TaskSink& s) { qr_form_q_tasks(L, s, f_.tree()); }, qex);
    return qr_residual(original, a_, e.to_dense());
  }
  Residuals residual_distributed(const TileMatrix<T>& original, const Distribution& dist, int self,
                                 const DistGraphRun& run, const SumOverNodes& sum) override {
    return qr_residual_distributed(original, a_, f_, dist, self, run, sum);
  }

 private:
  TileMatrix<T>& a_;
  QrFactors<T> f_;
  QrExecutor<T> ex_;
};

inline lapack_int geqrf(index_t m, index_t n, double* a, double* tau) {
  return LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau);
}
inline lapack_int geqrf(index_t m, index_t n, float* a, float* tau) {
  return LAPACKE_sgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau);
}
inline lapack_int orgqr(index_t m, index_t n, double* a, const double* tau) {
  return LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau);
}
inline lapack_int orgqr(index_t m, index_t n, float* a, const float* tau) {
  return LAPACKE_sorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau);
}

class Qr final : public FactorizationOf<Qr> {
 public:
  Qr() = default;
  Qr(QrTreeKind kind, int grid_rows, int v, int domain) : kind_(kind), grid_rows_(grid_rows), v_(v), domain_(domain) {}
  std::string_view name() const override { return "qr"; }
  std::shared_ptr<const Factorization> configured(const FactorOptions& o) const override {
    if (!o.pivot.empty()) throw InputError("--pivot is not an option of --algo qr");
    if (!o.tree.empty()) throw InputError("--tslu-tree is not an option of --algo qr (its tree is --qr-tree)");
    if (o.d != 0) throw InputError("--d is not an option of --algo qr");
    const QrTreeKind kind = o.qr_tree.empty() ? QrTreeKind::Flat : parse_qr_tree(o.qr_tree);
    if (o.qr_domain >= 0 && kind != QrTreeKind::Binary)
      throw InputError("--qr-domain " + std::to_string(o.qr_domain) + " needs --qr-tree binary");
    return std::make_shared<Qr>(kind, o.grid_rows, o.v, std::max(o.qr_domain, 0));
  }
  std::string variant() const override {
    if (kind_ != QrTreeKind::Binary) return "";
    return domain_ > 0 ? "tree=binary domain=" + std::to_string(domain_) : "tree=binary";
  }
  // The reduction tree of a run on layout l.
  QrTree tree(const TileLayout& l) const {
    return kind_ == QrTreeKind::Binary ? QrTree(l, grid_rows_, v_, domain_) : QrTree();
  }
  void check_shape(index_t m, index_t n) const override {
    if (m < n) throw InputError("QR needs m >= n: m = " + std::to_string(m) + ", n = " + std::to_string(n));
  }
  MatrixKind default_matrix() const override { return MatrixKind::General; }
  std::string matrix_refusal(MatrixKind kind, index_t m, index_t n) const override {
    if (kind == MatrixKind::Spd && m != n)
      return "is square, but --m " + std::to_string(m) + " differs from --n " + std::to_string(n) +
             ": a tall QR input is general, graded, illcond or rankdef";
    return "";
  }
  bool symmetric_input() const override { return false; }
  double flops(index_t m, index_t n) const override {
    const double M = static_cast<double>(m), N = static_cast<double>(n);
    return 2.0 * M * N * N - 2.0 * N * N * N / 3.0;
  }
  std::uint16_t dominant_kernel() const override { return kSsrfb; }
  bool uses_virtual_tiles() const override { return true; }
  std::size_t data_count(const TileLayout& l) const override { return qr_data_count(l, tree(l)); }
  void tasks(const TileLayout& l, TaskSink& sink) const override { qr_tasks(l, sink, tree(l)); }
  KernelShape shape(const TileLayout& l, const TaskDesc& t, char precision, index_t ib) const override {
    return qr_shape(l, t, precision, std::min(ib, l.col_width(t.arg[0])));
  }
  // A panel copy lives with the head tile whose GEQRT writes it.
  Placement placement(const TileLayout& l, const Distribution& dist) const override {
    std::vector<std::pair<int, int>> panels;
    for (int k = 0; k < l.tile_cols(); ++k) panels.emplace_back(l.col_top(k), k);
    const QrTree t = tree(l);
    for (std::size_t x = 0; x < t.head_panels(); ++x) {
      const auto [k, h] = t.head_panel_at(x);
      panels.emplace_back(h, k);
    }
    return anchored_placement(l, dist, std::move(panels));
  }
  // Tiles with their T factor, then the panel copies; QrFactors that keep
  // nothing know the sizes and allocate nothing.
  std::function<std::size_t(DataId)> phantom_bytes(const TileLayout& l, index_t ib, std::size_t word) const override {
    auto sizes = std::make_shared<QrFactors<double>>(
        l, ib, [](int, int) { return false; }, tree(l));
    const int p = l.tile_rows();
    const DataId pq = static_cast<DataId>(p * l.tile_cols());
    return [l, sizes, p, pq, word](DataId d) -> std::size_t {
      if (d >= pq) return sizes->v_elems(static_cast<int>(d - pq)) * word;
      const int i = static_cast<int>(d % p), j = static_cast<int>(d / p);
      return (static_cast<std::size_t>(l.row_height(i) * l.col_width(j)) + sizes->t_elems(i, j)) * word;
    };
  }
  [[noreturn]] void throw_breakdown(std::int64_t column) const override {
    throw std::logic_error("QR never breaks down, yet a peer reported column " + std::to_string(column));
  }
  PeerRoutine cusolver_routine() const override { return PeerRoutine::Geqrf; }

 private:
  QrTreeKind kind_ = QrTreeKind::Flat;
  int grid_rows_ = 1, v_ = 1, domain_ = 0;

 public:
  template <class T>
  static std::unique_ptr<FactorData<T>> make_data(TileMatrix<T>& a, index_t ib, const KeepTile& keep) {
    return std::make_unique<QrData<T>>(a, ib, keep, QrTree());
  }
  // With this instance's tree (FactorizationOf's versions know only the flat one).
  std::unique_ptr<FactorData<double>> data(TileMatrix<double>& a, index_t ib, const KeepTile& keep) const override {
    return std::make_unique<QrData<double>>(a, ib, keep, tree(a.layout()));
  }
  std::unique_ptr<FactorData<float>> data(TileMatrix<float>& a, index_t ib, const KeepTile& keep) const override {
    return std::make_unique<QrData<float>>(a, ib, keep, tree(a.layout()));
  }
  std::unique_ptr<GpuTables<double>> gpu_tables(const TileLayout& l, index_t ib, double) const override {
    return std::make_unique<GpuTables<double>>(l, maker<double>(), ib);
  }
  std::unique_ptr<GpuTables<float>> gpu_tables(const TileLayout& l, index_t ib, float) const override {
    return std::make_unique<GpuTables<float>>(l, maker<float>(), ib);
  }
  // aux: tau.
  template <class T>
  static int lapack_factor(index_t m, index_t n, T* a, std::vector<T>& aux) {
    aux.assign(static_cast<std::size_t>(n), T(0));
    return geqrf(m, n, a, aux.data());
  }
  template <class T>
  typename GpuTables<T>::Make maker() const {
    return [this](TileMatrix<T>& a, index_t ib, const KeepTile& keep) -> std::unique_ptr<FactorData<T>> {
      return std::make_unique<QrData<T>>(a, ib, keep, tree(a.layout()));
    };
  }
  template <class T>
  static Residuals lapack_check(const std::vector<T>& original, const TileMatrix<T>& a, std::vector<T>& tau) {
    const index_t m = a.layout().m(), n = a.layout().n();
    const T* d = a.tile(0, 0);
    std::vector<T> q(d, d + m * n);
    orgqr(m, n, q.data(), tau.data());
    return qr_residual(original, a, q);
  }
};

}  // namespace

const Factorization& qr_factorization() {
  static const Qr instance;  // stateless: shared by every node of a simulated cluster
  return instance;
}

}  // namespace tessera
