#pragma once
// Scaled residuals of a distributed factorization, computed without any node
// holding the whole matrix: the products L L^T, Q R and Q^T Q are themselves
// task graphs run by the distributed runtime (each node computes the tiles
// it owns and receives the others' factor tiles it needs), and each node
// adds its own tiles' column sums to vectors summed over all nodes. The
// ratios and the threshold are those of algorithms/check.hpp.
#include <functional>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/qr.hpp"
#include "base/tile_matrix.hpp"
#include "runtime/distribution.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Runs one task graph on this node of the distributed run: `n_data` data
// placed by `where`, moved through `store`. The driver binds the platform,
// the network and the runtime options.
using DistGraphRun = std::function<void(std::size_t n_data, const Generator& generate, Executor& executor,
                                        DataStore& store, const Placement& where)>;
// Element-wise sum over all nodes.
using SumOverNodes = std::function<void(std::vector<double>&)>;

// `original` and `factored` hold this node's tiles (those `dist` gives it);
// `factored`'s diagonal-block tiles get their upper part zeroed.
template <class T>
Residuals cholesky_residual_distributed(const TileMatrix<T>& original, TileMatrix<T>& factored,
                                        const Distribution& dist, int self, const DistGraphRun& run,
                                        const SumOverNodes& sum);

template <class T>
Residuals qr_residual_distributed(const TileMatrix<T>& original, TileMatrix<T>& factored, QrFactors<T>& factors,
                                  const Distribution& dist, int self, const DistGraphRun& run, const SumOverNodes& sum);

}  // namespace tessera
