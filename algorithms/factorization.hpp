#pragma once
// The factorization registry: one Factorization per algorithm, registered by
// name (algorithms/registry.cpp). Everything that differs between Cholesky,
// QR and the factorizations to come is behind this interface: what input it
// takes, its tasks and their kernels' shapes, where its data live, the data
// it makes besides the matrix (QR's T factors and panel copies), its checks
// and its peers. The driver, the simulator's phantom runs, calibration,
// balance and the tests look a factorization up by name; none of them
// branches on the algorithm.
//
// Adding a factorization: its tasks and executor (like algorithms/qr.*), a
// class deriving from FactorizationOf<Impl> (like algorithms/qr_factorization.cpp),
// two lines in algorithms/registry.cpp, its kernels in base/kernel_table.*
// and the TileKernels interface. CONTRIBUTING.md has the list.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/dist_check.hpp"
#include "algorithms/tile_data_store.hpp"
#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "base/peer_routine.hpp"
#include "base/tile_matrix.hpp"
#include "runtime/distribution.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Runs one task graph on this node to the end (the driver binds the
// platform and runtime options): for checks that are themselves task
// graphs, such as forming QR's Q.
using LocalGraphRun = std::function<void(std::size_t n_data, const Generator& generate, Executor& executor)>;

// Which tiles a node keeps: keep(i, j). Empty: all of them.
using KeepTile = std::function<bool(int, int)>;

// One factorization's data in precision T on one node, around a tile matrix
// it does not own: the extra data the factorization makes (allocated for the
// tiles `keep` names), the executor that runs its tasks on them, and its checks.
template <class T>
class FactorData {
 public:
  virtual ~FactorData() = default;
  virtual Executor& executor() = 0;
  // Registers every datum [0, data_count) in `store`, in wire order (a tile,
  // then what travels with it; then the extra data).
  virtual void add_to(TileDataStore<T>& store) = 0;
  // After the run, with the whole matrix on this node; `original` is A
  // column-major. May run task graphs through `run`.
  virtual Residuals residual(const std::vector<T>& original, const LocalGraphRun& run) = 0;
  // After a distributed run: `original` holds this node's tiles of A.
  virtual Residuals residual_distributed(const TileMatrix<T>& original, const Distribution& dist, int self,
                                         const DistGraphRun& run, const SumOverNodes& sum) = 0;
};

// A GPU's tile tables (000 §5.5) for a factorization: a tile matrix that owns
// no storage, the factorization's data around it (owning none either), and
// the table of both that points into the GPU's buffers.
template <class T>
struct GpuTables {
  using Make = std::function<std::unique_ptr<FactorData<T>>(TileMatrix<T>&, index_t, const KeepTile&)>;
  GpuTables(const TileLayout& L, const Make& make, index_t ib)
      : a(L, false), data(make(a, ib, [](int, int) { return false; })) {
    data->add_to(tables);
  }
  Executor& executor() { return data->executor(); }
  TileMatrix<T> a;
  std::unique_ptr<FactorData<T>> data;
  TileDataStore<T> tables;
};

// The options of a run that choose a factorization's variant: --pivot and
// --tslu-tree (empty when not given), the CPU side's block columns of a
// CPU/GPU split (--d, resolved to a number before; 0 when not given, which a
// factorization that splits its columns reads with gpus > 0 as no column on
// the cores: LU's --d 0) and the GPUs per node.
struct FactorOptions {
  std::string pivot, tree;
  int d = 0;
  int gpus = 0;
  // The node rows of the grid and the virtual tile height (tile rows that
  // share a node row): where task order can save crossings between nodes.
  int grid_rows = 1, v = 1;
  // QR's --qr-tree (empty when not given) and --qr-domain (-1: not given).
  std::string qr_tree;
  int qr_domain = -1;
  // The node columns of the grid: a node's GPU g holds its local top-level
  // columns J with J mod G = g - 1 (runtime/distribution.hpp), J = top / Pc.
  int grid_cols = 1;
};

class Factorization {
 public:
  virtual ~Factorization() = default;
  // The --algo name.
  virtual std::string_view name() const = 0;
  // This factorization with a run's options. The default takes none and
  // throws InputError naming a given one; an instance that takes them
  // returns a new one (registered instances stay shared and stateless).
  virtual std::shared_ptr<const Factorization> configured(const FactorOptions& o) const {
    const auto refuse = [&](const char* opt, bool given) {
      if (given) throw InputError(std::string(opt) + " is not an option of --algo " + std::string(name()));
    };
    refuse("--pivot", !o.pivot.empty());
    refuse("--tslu-tree", !o.tree.empty());
    refuse("--d", o.d != 0);
    refuse("--qr-tree", !o.qr_tree.empty());
    refuse("--qr-domain", o.qr_domain >= 0);
    return std::shared_ptr<const Factorization>(this, [](const Factorization*) {});
  }
  // Whether it splits its block columns between the CPU cores and the GPUs
  // by a count d (002 Alg. 2), so that --d and its model apply.
  virtual bool splits_columns() const { return false; }
  // A line of what the configured variant is ("pivot=tournament tree=binary
  // d=8"), for the summary; empty when there is nothing to say.
  virtual std::string variant() const { return ""; }

  // Input. Throws InputError when an m×n matrix cannot be factored.
  virtual void check_shape(index_t m, index_t n) const = 0;
  // The generated matrix when --matrix is not given.
  virtual MatrixKind default_matrix() const = 0;
  // Why a generated matrix of `kind` does not suit (empty: it does).
  virtual std::string matrix_refusal(MatrixKind kind, index_t m, index_t n) const = 0;
  // Whether only the lower triangle of the input is read (then a Matrix
  // Market file must be symmetric).
  virtual bool symmetric_input() const = 0;

  // The standard flop count of the whole factorization.
  virtual double flops(index_t m, index_t n) const = 0;
  // Whether the rows are distributed in virtual tiles of v tile rows (000
  // App. A.2.2: a flat reduction tree down each tile column).
  virtual bool uses_virtual_tiles() const { return false; }
  // The kernel that does most of the work (for --b auto's speed ratio).
  virtual std::uint16_t dominant_kernel() const = 0;

  // Tasks: data [0, data_count), inserted in serial order.
  virtual std::size_t data_count(const TileLayout& l) const = 0;
  virtual void tasks(const TileLayout& l, TaskSink& sink) const = 0;
  // A task's kernel dimensions without data (simulated runs).
  virtual KernelShape shape(const TileLayout& l, const TaskDesc& t, char precision, index_t ib) const = 0;
  // Where every datum lives: tiles where `dist` puts them, extra data with the tile they belong to.
  virtual Placement placement(const TileLayout& l, const Distribution& dist) const = 0;
  // Each datum's bytes on the wire, for a run without data.
  virtual std::function<std::size_t(DataId)> phantom_bytes(const TileLayout& l, index_t ib, std::size_t word) const = 0;

  // The factorization's data around `a` (tiles `keep` names; empty: all).
  virtual std::unique_ptr<FactorData<double>> data(TileMatrix<double>& a, index_t ib, const KeepTile& keep) const = 0;
  virtual std::unique_ptr<FactorData<float>> data(TileMatrix<float>& a, index_t ib, const KeepTile& keep) const = 0;
  virtual std::unique_ptr<GpuTables<double>> gpu_tables(const TileLayout& l, index_t ib, double) const = 0;
  virtual std::unique_ptr<GpuTables<float>> gpu_tables(const TileLayout& l, index_t ib, float) const = 0;

  // Peers on one dense column-major matrix (a, m×n, leading dimension m):
  // the LAPACK routine (returns LAPACK's info; `aux` holds what the check
  // needs, such as QR's tau) and the check of its output; cuSOLVER's routine.
  virtual int lapack(index_t m, index_t n, double* a, std::vector<double>& aux) const = 0;
  virtual int lapack(index_t m, index_t n, float* a, std::vector<float>& aux) const = 0;
  virtual Residuals lapack_residual(const std::vector<double>& original, const TileMatrix<double>& a,
                                    std::vector<double>& aux) const = 0;
  virtual Residuals lapack_residual(const std::vector<float>& original, const TileMatrix<float>& a,
                                    std::vector<float>& aux) const = 0;
  virtual PeerRoutine cusolver_routine() const = 0;
  // The error (exit 3) for a peer's info > 0: the 1-based global column where
  // the factorization broke down.
  [[noreturn]] virtual void throw_breakdown(std::int64_t column) const = 0;
};

// Implements the precision-typed half of Factorization from an Impl with
// templates: Impl::template make_data<T>(a, ib, keep), Impl::lapack_factor<T>,
// Impl::lapack_check<T>.
template <class Impl>
class FactorizationOf : public Factorization {
 public:
  std::unique_ptr<FactorData<double>> data(TileMatrix<double>& a, index_t ib, const KeepTile& keep) const override {
    return Impl::template make_data<double>(a, ib, keep);
  }
  std::unique_ptr<FactorData<float>> data(TileMatrix<float>& a, index_t ib, const KeepTile& keep) const override {
    return Impl::template make_data<float>(a, ib, keep);
  }
  std::unique_ptr<GpuTables<double>> gpu_tables(const TileLayout& l, index_t ib, double) const override {
    return std::make_unique<GpuTables<double>>(l, &Impl::template make_data<double>, ib);
  }
  std::unique_ptr<GpuTables<float>> gpu_tables(const TileLayout& l, index_t ib, float) const override {
    return std::make_unique<GpuTables<float>>(l, &Impl::template make_data<float>, ib);
  }
  int lapack(index_t m, index_t n, double* a, std::vector<double>& aux) const override {
    return Impl::template lapack_factor<double>(m, n, a, aux);
  }
  int lapack(index_t m, index_t n, float* a, std::vector<float>& aux) const override {
    return Impl::template lapack_factor<float>(m, n, a, aux);
  }
  Residuals lapack_residual(const std::vector<double>& original, const TileMatrix<double>& a,
                            std::vector<double>& aux) const override {
    return Impl::template lapack_check<double>(original, a, aux);
  }
  Residuals lapack_residual(const std::vector<float>& original, const TileMatrix<float>& a,
                            std::vector<float>& aux) const override {
    return Impl::template lapack_check<float>(original, a, aux);
  }
};

// The registered factorization `name`; throws InputError naming --algo and
// the registered names otherwise.
const Factorization& factorization(std::string_view name);
// Every registered name, in registration order.
std::vector<std::string_view> factorization_names();
// "cholesky, qr": for messages and help texts.
std::string factorization_list();

}  // namespace tessera
