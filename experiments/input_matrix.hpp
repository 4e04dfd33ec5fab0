#pragma once
// The matrix a run factors: generated (--matrix KIND, --seed; the kinds and
// their condition numbers are in base/matrix_gen.hpp) or read from a
// Matrix Market file (--input).
#include "base/matrix_market.hpp"
#include "base/tile_matrix.hpp"
#include "experiments/driver.hpp"

namespace tessera {

// Once m and n are known: resolves config.matrix (empty: spd for Cholesky,
// general for QR; with --input it stays empty) and checks that the matrix
// suits the factorization. Throws InputError naming --matrix or --input.
void resolve_matrix(RunConfig& config, const DenseMatrix* input);

// The input of a distributed run: the file's size only (no values), for
// fill() to stream the file into each node's own tiles.
DenseMatrix read_input_header(const std::string& path);

// Fills the tiles `a` holds (a distributed run's node: its own) with the
// run's matrix: the file's (`input`; one without values, from
// read_input_header, is read again keeping only these tiles), or the
// generated one.
template <class T>
void fill(TileMatrix<T>& a, const RunConfig& config, const DenseMatrix* input);

}  // namespace tessera
