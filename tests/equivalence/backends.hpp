#pragma once
// The backends of the cross-backend equivalence suite (test_equivalence.cpp)
// and what each gives back: the bytes of every datum of a factorization
// after the run, and the residuals of the same run through the driver with
// --check. Nothing here names a factorization: each is looked up in the
// registry (algorithms/factorization.hpp) by the name the test gives.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/tile_layout.hpp"

namespace tessera::equivalence {

enum class Kind {
  Sequential,  // SequentialSink: the serial order on the calling thread (the reference again); the driver: --threads 1
  Threads,     // one NodeRuntime on NativePlatform threads
  Cluster,     // a LocalCluster of pr x pc nodes, one thread per node, in this process
  Gpus,        // pr x pc nodes (a LocalCluster) with `gpus` emulated GPUs each
  Sim,         // pr x pc simulated nodes (SimGrid, --sim-data), `gpus` simulated GPUs each, in a child process
};

struct Backend {
  std::string name;  // part of the test name
  Kind kind = Kind::Sequential;
  int threads = 1;  // compute threads per node
  int pr = 1, pc = 1;
  int gpus = 0;     // per node
  int streams = 1;  // compute streams per simulated GPU (their kernels side by side)
  // --dist gpu-columns: every tile column of a node on its GPUs (runtime/distribution.hpp).
  bool gpu_columns = false;
  int nodes() const { return pr * pc; }
};

// The matrix and its two-level tiles (base/tile_layout.hpp).
struct Shape {
  index_t m, n, B;
  int s;
  index_t b;  // 0 when s = 1
  TileLayout layout() const { return TileLayout(m, n, B, s, b); }
};

struct Case {
  std::string algo;  // a registered factorization
  Backend backend;
  char precision;  // d | s
  Shape shape;
};

// QR inner blocking (and whatever else a factorization's data takes as ib),
// the generated matrix's seed, and the machine file of simulated runs.
inline constexpr index_t kIb = 16;
inline constexpr std::uint64_t kSeed = 11;
std::string machine_file();

// The bytes of every datum [0, data_count) of a finished run, as
// TileDataStore::pack puts it on the wire: a tile and what travels with it
// (QR's T factor), then the factorization's extra data (QR's panel copies).
// A distributed run's datum comes from the node `placement` makes its home.
using Factors = std::vector<std::string>;

// The sequential reference: factorization(algo).tasks through a
// SequentialSink over factorization(algo).data(a, ib, {})->executor().
Factors reference(const Case& c);
// The same matrix factored by c.backend.
Factors run_backend(const Case& c);
// The generated input itself (no task run): the reference must differ from it.
Factors unfactored(const Case& c);

// Empty when `got` equals `ref` byte for byte; otherwise where they first
// differ: the datum (tile (i, j) for the tile data), the element and both values.
// The data the factorization discards (TaskSink::discard: scratch, such as
// QR's panel copies, which a GPU that wrote them never brings home) are no
// part of the result and are not compared.
std::string first_difference(const Case& c, const Factors& ref, const Factors& got);
// Which data the factorization of case c discards (indexed by DataId).
std::vector<bool> scratch_data(const Case& c);

// One node's residuals, as run_factorization reported them.
struct Checked {
  bool passed = false;
  double factor = 0;
  std::vector<std::pair<std::string, double>> more;  // QR: orth
  std::string text() const;
};
// The same case through run_factorization with check = true (and
// test_fault, when given) on c.backend: every node's residuals.
std::vector<Checked> run_checked(const Case& c, const std::string& test_fault = "");
// The sequential reference's residuals: FactorData::residual with every task
// graph of the check run by a SequentialSink.
Checked reference_residual(const Case& c);

}  // namespace tessera::equivalence
