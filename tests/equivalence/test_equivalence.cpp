// One cross-backend equivalence suite (issue 11 point 5): every registered
// factorization (factorization_names(): a new one joins by registering) on
// every backend, in both precisions, against the sequential reference.
//
// Why the factors must match bit for bit: every backend runs the same serial
// task sequence, factorization(name).tasks, and the task window (APPEND/FIRE)
// runs the tasks that touch a datum in that sequence's order, whatever the
// ready-queue order (random here), the number of threads, nodes or GPUs, or
// the clock (simulated). So every tile sees the same kernel calls on the same
// input bytes as in the serial order; the kernels are deterministic
// (single-threaded OpenBLAS/LAPACKE; an emulated GPU, and a simulated node or
// GPU with --sim-data, runs the same CPU kernels), and a datum moves between
// nodes and devices as a byte copy. So the bytes of every datum (a tile, its
// QR T factor, the QR panel copies: whatever TileDataStore::pack puts on the
// wire) must equal the reference's, which this suite compares byte for byte,
// but for the data the factorization discards as scratch (QR's panel copies:
// TaskSink::discard), which a GPU that wrote them never brings home.
// A distributed run's data are spread over its nodes: each datum is read on
// the node its placement makes its home, where it ends.
//
// The kernels must run with one BLAS thread, as the driver runs them: a
// multithreaded OpenBLAS call sums in another order (a Cholesky of n = 384,
// B = 96 factored with 2 BLAS threads differs from the one with 1 in 5994
// of its 147456 elements). The harness sets one thread before every run,
// since the driver's local check leaves OpenBLAS at --threads threads.
//
// Each case also runs through the driver (run_factorization) with --check,
// and its residuals must pass (below kResidualThreshold = 30,
// algorithms/check.hpp) on every node. A residual measures rounding error,
// so any change in how it is computed changes it at its own scale: it is
// compared bit for bit only where it is computed the same way. A check on
// one node without GPUs (run_local) is the reference's check on the same
// bytes, with its dense products on --threads BLAS threads (so the residual
// may differ between --threads 1, 2 and 3): it must equal the reference's
// computed that way. A distributed check (a
// LocalCluster, GPUs, which run the distributed protocol on one node too, a
// simulated cluster) forms the products as task graphs, tile by tile, and
// sums each node's column sums over the nodes (algorithms/dist_check.hpp),
// so its residual differs from the local one (Cholesky, d, 384: 0.00296
// against 0.00431) and, in double, between grids in the last bits: there
// every node must report the same residual, and it must agree with the
// reference's up to rounding (as tests/test_distributed.cpp checks it).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/factorization.hpp"
#include "backends.hpp"
#include "base/error.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace tessera::equivalence {
namespace {

// Parallelism comes from the runtime's threads: one BLAS thread per kernel,
// as the driver sets it.
class BlasSingleThreaded : public ::testing::Environment {
 public:
  void SetUp() override { kernels::set_blas_threads(1); }
};
const auto* const kBlasEnv = ::testing::AddGlobalTestEnvironment(new BlasSingleThreaded);

std::vector<Backend> backends() {
  std::vector<Backend> b = {
      {.name = "sequential", .kind = Kind::Sequential, .threads = 1},
      {.name = "threads2", .kind = Kind::Threads, .threads = 2},
      {.name = "threads3", .kind = Kind::Threads, .threads = 3},
      {.name = "cluster2x2", .kind = Kind::Cluster, .threads = 1, .pr = 2, .pc = 2},
      {.name = "cluster1x2", .kind = Kind::Cluster, .threads = 2, .pr = 1, .pc = 2},
      {.name = "gpus2", .kind = Kind::Gpus, .threads = 1, .gpus = 2},
      {.name = "cluster2x1_gpus1", .kind = Kind::Gpus, .threads = 1, .pr = 2, .pc = 1, .gpus = 1},
      {.name = "gpus2_gpucolumns", .kind = Kind::Gpus, .threads = 1, .gpus = 2, .gpu_columns = true},
  };
#if TESSERA_HAVE_SIMGRID
  // Keeneland nodes (platform/machines/keeneland.json), with and without GPUs.
  b.push_back({.name = "sim2x2", .kind = Kind::Sim, .threads = 2, .pr = 2, .pc = 2});
  b.push_back({.name = "sim2x1_gpus1", .kind = Kind::Sim, .threads = 1, .pr = 2, .pc = 1, .gpus = 1});
  // Three compute streams: three tasks' kernels in flight, retired in any order.
  b.push_back({.name = "sim_gpus1_streams3", .kind = Kind::Sim, .threads = 1, .gpus = 1, .streams = 3});
  // Every column on the GPUs of a 2x2 cluster, two streams.
  b.push_back({.name = "sim2x2_gpus1_gpucolumns",
               .kind = Kind::Sim,
               .threads = 1,
               .pr = 2,
               .pc = 2,
               .gpus = 1,
               .streams = 2,
               .gpu_columns = true});
#endif
  return b;
}

Backend backend_named(const std::string& name) {
  for (const Backend& b : backends())
    if (b.name == name) return b;
  throw std::logic_error("no backend " + name);
}

// Square, in one-level (s = 1) and two-level tiles (s = 2, narrow columns of
// 16); a tall one where the factorization takes m > n. 96 divides neither
// 512 nor 256: the last tile row and column are partial.
std::vector<Shape> shapes(const Factorization& f) {
  std::vector<Shape> s = {{384, 384, 96, 1, 0}, {384, 384, 96, 2, 16}};
  try {
    f.check_shape(512, 256);
    s.push_back({512, 256, 96, 2, 16});
  } catch (const InputError&) {
  }
  return s;
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "_B" + std::to_string(s.B) + "_s" + std::to_string(s.s);
}

std::string case_name(const Case& c) {
  return c.algo + "_" + c.backend.name + "_" + c.precision + "_" + shape_name(c.shape);
}

// A test: a factorization on a backend in a precision, on every shape of
// shapes() (one test for them all: each test is a process under ctest, and a
// process that links the CUDA libraries takes about 0.4 s to start).
struct Param {
  std::string algo;
  Backend backend;
  char precision;
  std::string name() const { return algo + "_" + backend.name + "_" + precision; }
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (const std::string_view name : factorization_names())
    for (const Backend& b : backends())
      // (gpu-columns does not place LU's columns: its --d does, and the CLI refuses the pair.)
      if (!(b.gpu_columns && factorization(name).splits_columns()))
        for (const char precision : {'d', 's'}) out.push_back({std::string(name), b, precision});
  return out;
}

// Readable parameters in failure messages.
[[maybe_unused]] void PrintTo(const Param& p, std::ostream* os) { *os << p.name(); }

class CrossBackend : public ::testing::TestWithParam<Param> {};

// The bytes, then the driver's check.
void expect_equivalent(const Case& c) {
  const Factors ref = reference(c);
  if (c.backend.kind == Kind::Sequential) {
    ASSERT_NE(first_difference(c, ref, unfactored(c)), "") << "the reference must have factored something";
  }
  EXPECT_EQ(first_difference(c, ref, run_backend(c)), "") << case_name(c) << " differs from the sequential reference";

  const std::vector<Checked> nodes = run_checked(c);
  ASSERT_EQ(nodes.size(), static_cast<std::size_t>(c.backend.nodes()));
  ASSERT_FALSE(nodes.empty());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    EXPECT_TRUE(nodes[k].passed) << "--check on node " << k << ": " << nodes[k].text();
    // One distributed check: every node reports the same sums.
    EXPECT_EQ(nodes[k].text(), nodes[0].text()) << "node " << k;
    EXPECT_EQ(nodes[k].factor, nodes[0].factor) << "node " << k;
  }
  const Checked ref_check = reference_residual(c);
  ASSERT_TRUE(ref_check.passed) << "the sequential reference: " << ref_check.text();
  // LU's distributed check gathers the whole factor on every node and checks
  // as a local run does (algorithms/lu_factorization.cpp).
  if (c.backend.kind == Kind::Sequential || c.backend.kind == Kind::Threads || c.algo == "lu") {
    // The same factor bytes, checked in the same order: the same residual.
    EXPECT_EQ(nodes[0].factor, ref_check.factor) << nodes[0].text() << ", the reference's " << ref_check.text();
    EXPECT_EQ(nodes[0].more, ref_check.more) << nodes[0].text() << ", the reference's " << ref_check.text();
  } else {
    // Another summation order of the products (L L^T, Q R, Q^T Q by tiles on
    // each node): a good factor's residual is rounding error, which that
    // order changes by up to 1.5x (measured on these shapes: Cholesky 0.67x
    // the reference's, QR 0.91x, orthogonality 0.95x). The same within a
    // factor of 2; a wrong norm or scale is rarely that close. (Before:
    // |difference| <= 50% + 0.05, ten times a Cholesky residual.)
    const auto within_2x = [](double x, double y) { return x <= 2 * y && y <= 2 * x; };
    ASSERT_GT(ref_check.factor, 0) << ref_check.text();  // or any 0 would do
    if (c.algo == "qr") {
      ASSERT_FALSE(ref_check.more.empty()) << "no orthogonality: " << ref_check.text();
    }
    EXPECT_TRUE(within_2x(nodes[0].factor, ref_check.factor))
        << nodes[0].text() << ", the reference's " << ref_check.text();
    ASSERT_EQ(nodes[0].more.size(), ref_check.more.size())
        << nodes[0].text() << ", the reference's " << ref_check.text();
    for (std::size_t i = 0; i < ref_check.more.size(); ++i) {
      EXPECT_EQ(nodes[0].more[i].first, ref_check.more[i].first);
      EXPECT_TRUE(within_2x(nodes[0].more[i].second, ref_check.more[i].second))
          << nodes[0].text() << ", the reference's " << ref_check.text();
    }
  }
}

TEST_P(CrossBackend, MatchesTheSequentialReference) {
  const Param& p = GetParam();
  std::vector<Shape> all = shapes(factorization(p.algo));
  if (p.backend.gpu_columns) {
    // s = 1 is multi-level's map (and refused); one tile row of 4 equal columns is what gpu-columns is for.
    std::erase_if(all, [](const Shape& s) { return s.s == 1; });
    all.push_back({384, 384, 384, 4, 96});
  }
  for (const Shape& shape : all) {
    const Case c{p.algo, p.backend, p.precision, shape};
    SCOPED_TRACE(case_name(c));
    expect_equivalent(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, CrossBackend, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) { return info.param.name(); });

// ---------------------------------------------------------------------------
// The suite catches what it is meant to catch.

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const std::string_view n : factorization_names()) out.emplace_back(n);
  return out;
}

class SelfCheck : public ::testing::TestWithParam<std::string> {};

// One bit of one element of a backend's result, in the first, a middle and
// the last datum of the result (scratch data are not compared, and no tile
// is scratch): the byte comparison names that datum.
TEST_P(SelfCheck, ComparisonCatchesOneFlippedBit) {
  for (const char precision : {'d', 's'}) {
    const Case c{GetParam(), backend_named("cluster2x2"), precision, {384, 384, 96, 2, 16}};
    const Factors ref = reference(c);
    const Factors good = run_backend(c);
    ASSERT_EQ(first_difference(c, ref, good), "");
    const std::vector<bool> scratch = scratch_data(c);
    const TileLayout L = c.shape.layout();
    std::vector<std::size_t> result;
    for (std::size_t d = 0; d < good.size(); ++d)
      if (d >= scratch.size() || !scratch[d]) result.push_back(d);
      else EXPECT_GE(d, static_cast<std::size_t>(L.tile_rows() * L.tile_cols())) << "a tile discarded as scratch";
    ASSERT_FALSE(result.empty());
    for (const std::size_t d : {result.front(), result[result.size() / 2], result.back()}) {
      Factors bad = good;
      ASSERT_FALSE(bad[d].empty());
      bad[d][bad[d].size() / 2] ^= 1;  // the last bit of an element's mantissa, or near it
      const std::string diff = first_difference(c, ref, bad);
      EXPECT_NE(diff.find("datum " + std::to_string(d) + " "), std::string::npos) << diff;
      EXPECT_EQ(diff.find("more data differ"), std::string::npos) << diff;
    }
    // A backend that ran nothing.
    EXPECT_NE(first_difference(c, ref, unfactored(c)), "");
  }
}

// --test-fault corrupt-factor perturbs one element of the factor after the
// run: the local and the distributed check must both fail it, on every node.
TEST_P(SelfCheck, DriverCheckCatchesACorruptFactor) {
  std::vector<std::string> on = {"threads2", "cluster2x2", "gpus2"};
#if TESSERA_HAVE_SIMGRID
  on.push_back("sim2x2");
#endif
  for (const std::string& b : on) {
    const Case c{GetParam(), backend_named(b), 'd', {384, 384, 96, 1, 0}};
    const std::vector<Checked> nodes = run_checked(c, "corrupt-factor");
    ASSERT_EQ(nodes.size(), static_cast<std::size_t>(c.backend.nodes())) << b;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      EXPECT_FALSE(nodes[k].passed) << b << " node " << k << ": " << nodes[k].text();
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, SelfCheck, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tessera::equivalence
