// Cholesky (001 Alg. 1) in the factorization registry: the lower triangle of
// a square SPD matrix, L overwriting it; the peers are LAPACK's and
// cuSOLVER's xPOTRF.
#include <lapacke.h>

#include "algorithms/cholesky.hpp"
#include "algorithms/factorization.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/numerics.hpp"

namespace tessera {
namespace {

template <class T>
class CholeskyData final : public FactorData<T> {
 public:
  explicit CholeskyData(TileMatrix<T>& a) : a_(a), ex_(a) {}
  Executor& executor() override { return ex_; }
  void add_to(TileDataStore<T>& store) override { store.add_tiles(0, a_); }
  Residuals residual(const std::vector<T>& original, const LocalGraphRun&) override {
    return cholesky_residual(original, a_);
  }
  Residuals residual_distributed(const TileMatrix<T>& original, const Distribution& dist, int self,
                                 const DistGraphRun& run, const SumOverNodes& sum) override {
    return cholesky_residual_distributed(original, a_, dist, self, run, sum);
  }

 private:
  TileMatrix<T>& a_;
  CholeskyExecutor<T> ex_;
};

inline lapack_int potrf(index_t n, double* a) { return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a, n); }
inline lapack_int potrf(index_t n, float* a) { return LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', n, a, n); }

class Cholesky final : public FactorizationOf<Cholesky> {
 public:
  std::string_view name() const override { return "cholesky"; }
  void check_shape(index_t m, index_t n) const override {
    if (m != n)
      throw InputError("Cholesky needs a square matrix: m = " + std::to_string(m) + ", n = " + std::to_string(n));
  }
  MatrixKind default_matrix() const override { return MatrixKind::Spd; }
  std::string matrix_refusal(MatrixKind kind, index_t, index_t) const override {
    if (kind == MatrixKind::General) return "is not symmetric: --algo cholesky factors spd, graded or illcond";
    if (kind == MatrixKind::RankDeficient)
      return "is singular (rank ceil(n/2)): --algo cholesky factors spd, graded or illcond";
    return "";
  }
  bool symmetric_input() const override { return true; }
  double flops(index_t, index_t n) const override {
    const double N = static_cast<double>(n);
    return N * N * N / 3.0;
  }
  std::uint16_t dominant_kernel() const override { return kGsmm; }
  std::size_t data_count(const TileLayout& l) const override { return cholesky_data_count(l); }
  void tasks(const TileLayout& l, TaskSink& sink) const override { cholesky_tasks(l, sink); }
  KernelShape shape(const TileLayout& l, const TaskDesc& t, char precision, index_t) const override {
    return cholesky_shape(l, t, precision);
  }
  Placement placement(const TileLayout& l, const Distribution& dist) const override {
    return anchored_placement(l, dist);
  }
  std::function<std::size_t(DataId)> phantom_bytes(const TileLayout& l, index_t, std::size_t word) const override {
    const int p = l.tile_rows();
    return [l, p, word](DataId d) {
      return static_cast<std::size_t>(l.row_height(static_cast<int>(d % p)) * l.col_width(static_cast<int>(d / p))) *
             word;
    };
  }
  [[noreturn]] void throw_breakdown(std::int64_t column) const override { throw NotPositiveDefinite(column); }
  PeerRoutine cusolver_routine() const override { return PeerRoutine::Potrf; }

  template <class T>
  static std::unique_ptr<FactorData<T>> make_data(TileMatrix<T>& a, index_t, const KeepTile&) {
    return std::make_unique<CholeskyData<T>>(a);
  }
  template <class T>
  static int lapack_factor(index_t, index_t n, T* a, std::vector<T>&) {
    const int info = potrf(n, a);
    return info != 0 ? info : static_cast<int>(first_bad_cholesky_diagonal(n, a, n));
  }
  template <class T>
  static Residuals lapack_check(const std::vector<T>& original, const TileMatrix<T>& a, std::vector<T>&) {
    return cholesky_residual(original, a);
  }
};

}  // namespace

const Factorization& cholesky_factorization() {
  static const Cholesky instance;  // stateless: shared by every node of a simulated cluster
  return instance;
}

}  // namespace tessera
